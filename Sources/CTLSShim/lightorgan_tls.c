// The page's TLS over Debian's OpenSSL: see include/lightorgan_tls.h. Only OpenSSL 3.0 functions (bookworm's
// libssl3), so one binary serves bookworm and trixie.
#include "lightorgan_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>

struct lightorgan_tls_context {
    SSL_CTX *ssl;
};

struct lightorgan_tls_session {
    SSL *ssl;
    BIO *incoming;  // the peer's bytes, read by OpenSSL (owned by ssl)
    BIO *outgoing;  // OpenSSL's bytes for the peer (owned by ssl)
};

// OpenSSL's first queued error (or `fallback`) into error; the queue emptied.
static void take_error(char *error, size_t error_size, const char *fallback) {
    unsigned long code = ERR_get_error();
    if (error != NULL && error_size > 0) {
        if (code != 0) {
            ERR_error_string_n(code, error, error_size);
        } else {
            snprintf(error, error_size, "%s", fallback);
        }
    }
    ERR_clear_error();
}

lightorgan_tls_context *lightorgan_tls_context_new(const char *certificate, const char *key, int *problem,
                                                   char *error, size_t error_size) {
    ERR_clear_error();
    lightorgan_tls_context *context = calloc(1, sizeof *context);
    if (context == NULL || (context->ssl = SSL_CTX_new(TLS_server_method())) == NULL) {
        *problem = LIGHTORGAN_TLS_CONTEXT_LIBRARY;
        take_error(error, error_size, "out of memory");
        free(context);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(context->ssl, TLS1_2_VERSION);
    // A page's connections are few and short-lived: no session tickets to make, keep or rotate.
    SSL_CTX_set_num_tickets(context->ssl, 0);
    SSL_CTX_set_options(context->ssl, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_session_cache_mode(context->ssl, SSL_SESS_CACHE_OFF);
    // The peer's bytes arrive as SwiftNIO reads them; a write goes out whole.
    SSL_CTX_set_mode(context->ssl, SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_use_certificate_chain_file(context->ssl, certificate) != 1) {
        *problem = LIGHTORGAN_TLS_CONTEXT_CERTIFICATE;
    } else if (SSL_CTX_use_PrivateKey_file(context->ssl, key, SSL_FILETYPE_PEM) != 1) {
        *problem = LIGHTORGAN_TLS_CONTEXT_KEY;
    } else if (SSL_CTX_check_private_key(context->ssl) != 1) {
        *problem = LIGHTORGAN_TLS_CONTEXT_MISMATCH;
    } else {
        *problem = LIGHTORGAN_TLS_CONTEXT_OK;
        return context;
    }
    take_error(error, error_size, "unknown reason");
    lightorgan_tls_context_free(context);
    return NULL;
}

void lightorgan_tls_context_free(lightorgan_tls_context *context) {
    if (context == NULL) return;
    SSL_CTX_free(context->ssl);
    free(context);
}

lightorgan_tls_session *lightorgan_tls_session_new(lightorgan_tls_context *context) {
    lightorgan_tls_session *session = calloc(1, sizeof *session);
    if (session == NULL) return NULL;
    session->ssl = SSL_new(context->ssl);
    session->incoming = BIO_new(BIO_s_mem());
    session->outgoing = BIO_new(BIO_s_mem());
    if (session->ssl == NULL || session->incoming == NULL || session->outgoing == NULL) {
        BIO_free(session->incoming);
        BIO_free(session->outgoing);
        SSL_free(session->ssl);
        free(session);
        ERR_clear_error();
        return NULL;
    }
    // An empty memory buffer means "wait for more", not end of file.
    BIO_set_mem_eof_return(session->incoming, -1);
    BIO_set_mem_eof_return(session->outgoing, -1);
    SSL_set_bio(session->ssl, session->incoming, session->outgoing);
    SSL_set_accept_state(session->ssl);
    return session;
}

void lightorgan_tls_session_free(lightorgan_tls_session *session) {
    if (session == NULL) return;
    SSL_free(session->ssl);  // frees both buffers
    free(session);
}

int lightorgan_tls_receive(lightorgan_tls_session *session, const uint8_t *bytes, size_t count) {
    while (count > 0) {
        int chunk = count > (1 << 30) ? (1 << 30) : (int)count;
        int written = BIO_write(session->incoming, bytes, chunk);
        if (written <= 0) {
            ERR_clear_error();
            return -1;
        }
        bytes += written;
        count -= (size_t)written;
    }
    return 0;
}

long lightorgan_tls_read(lightorgan_tls_session *session, uint8_t *buffer, size_t size, char *error,
                         size_t error_size) {
    ERR_clear_error();
    size_t got = 0;
    int status = SSL_read_ex(session->ssl, buffer, size, &got);
    if (status == 1) return (long)got;
    switch (SSL_get_error(session->ssl, status)) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_WANT_WRITE:
            ERR_clear_error();
            return LIGHTORGAN_TLS_WANTS_MORE;
        case SSL_ERROR_ZERO_RETURN:
            ERR_clear_error();
            return LIGHTORGAN_TLS_CLOSED;
        default:
            take_error(error, error_size, "the connection's TLS failed");
            return LIGHTORGAN_TLS_FAILED;
    }
}

long lightorgan_tls_write(lightorgan_tls_session *session, const uint8_t *bytes, size_t count, char *error,
                          size_t error_size) {
    ERR_clear_error();
    if (count == 0) return 0;
    size_t written = 0;
    // The outgoing buffer grows as needed: a write never waits, and without SSL_MODE_ENABLE_PARTIAL_WRITE it
    // encrypts all of `bytes`.
    if (SSL_write_ex(session->ssl, bytes, count, &written) == 1 && written == count) return (long)count;
    take_error(error, error_size, "the connection's TLS failed writing");
    return LIGHTORGAN_TLS_FAILED;
}

int lightorgan_tls_is_established(lightorgan_tls_session *session) {
    return SSL_is_init_finished(session->ssl) ? 1 : 0;
}

size_t lightorgan_tls_pending(lightorgan_tls_session *session) {
    return BIO_ctrl_pending(session->outgoing);
}

size_t lightorgan_tls_take(lightorgan_tls_session *session, uint8_t *buffer, size_t size) {
    int chunk = size > (1 << 30) ? (1 << 30) : (int)size;
    int taken = BIO_read(session->outgoing, buffer, chunk);
    if (taken <= 0) {
        ERR_clear_error();
        return 0;
    }
    return (size_t)taken;
}

void lightorgan_tls_shut_down(lightorgan_tls_session *session) {
    if (SSL_is_init_finished(session->ssl)) SSL_shutdown(session->ssl);
    ERR_clear_error();
}
