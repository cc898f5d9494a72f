#ifndef LIGHTORGAN_TLS_H
#define LIGHTORGAN_TLS_H
// The page's TLS over Debian's OpenSSL (libssl3): a server context from PEM files, and one session per
// connection that takes the peer's bytes and gives back plaintext and the bytes to send, through memory
// buffers (no socket: SwiftNIO owns the socket). Small on purpose: Swift sees no OpenSSL macro or type.
#include <stddef.h>
#include <stdint.h>

typedef struct lightorgan_tls_context lightorgan_tls_context;
typedef struct lightorgan_tls_session lightorgan_tls_session;

// What failed loading a context (with the error text), for a message that names the file.
enum lightorgan_tls_context_problem {
    LIGHTORGAN_TLS_CONTEXT_OK = 0,
    LIGHTORGAN_TLS_CONTEXT_CERTIFICATE = 1,  // the certificate chain file
    LIGHTORGAN_TLS_CONTEXT_KEY = 2,          // the private key file
    LIGHTORGAN_TLS_CONTEXT_MISMATCH = 3,     // the key does not belong to the certificate
    LIGHTORGAN_TLS_CONTEXT_LIBRARY = 4,      // OpenSSL could not make a context
};

// A TLS 1.2 and 1.3 server context presenting the PEM chain in `certificate` (leaf first) with the PEM
// private key in `key`. NULL on failure, with *problem set and OpenSSL's reason in error (NUL-terminated).
lightorgan_tls_context *lightorgan_tls_context_new(const char *certificate, const char *key, int *problem,
                                                   char *error, size_t error_size);
void lightorgan_tls_context_free(lightorgan_tls_context *context);

// A server session of `context` (which must outlive it); NULL when out of memory.
lightorgan_tls_session *lightorgan_tls_session_new(lightorgan_tls_context *context);
void lightorgan_tls_session_free(lightorgan_tls_session *session);

// Takes `count` bytes the peer sent. 0, or -1 when out of memory.
int lightorgan_tls_receive(lightorgan_tls_session *session, const uint8_t *bytes, size_t count);

// Results of lightorgan_tls_read and lightorgan_tls_write besides a byte count.
enum lightorgan_tls_result {
    LIGHTORGAN_TLS_WANTS_MORE = 0,  // nothing now: the session waits for more of the peer's bytes
    LIGHTORGAN_TLS_CLOSED = -1,     // the peer closed the session (close_notify)
    LIGHTORGAN_TLS_FAILED = -2,     // a protocol error: the reason is in error
};

// Advances the handshake and decrypts: > 0, that many plaintext bytes were put in `buffer`; else a
// lightorgan_tls_result. Call until it returns <= 0 after each lightorgan_tls_receive.
long lightorgan_tls_read(lightorgan_tls_session *session, uint8_t *buffer, size_t size, char *error,
                         size_t error_size);

// Encrypts `count` plaintext bytes (after the handshake): count, or LIGHTORGAN_TLS_FAILED.
long lightorgan_tls_write(lightorgan_tls_session *session, const uint8_t *bytes, size_t count, char *error,
                          size_t error_size);

// 1 once the handshake is complete.
int lightorgan_tls_is_established(lightorgan_tls_session *session);

// The bytes waiting to be sent to the peer, and taking up to `size` of them (the count taken).
size_t lightorgan_tls_pending(lightorgan_tls_session *session);
size_t lightorgan_tls_take(lightorgan_tls_session *session, uint8_t *buffer, size_t size);

// Queues this side's close_notify (to take and send) when the session is established.
void lightorgan_tls_shut_down(lightorgan_tls_session *session);

#endif
