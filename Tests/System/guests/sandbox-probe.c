// sandbox-probe: tries, once each, what the receiver's service must no longer be able to do, and prints one
// line per attempt, "NAME ok" or "NAME ERRNO-NAME" (or a count), for test_package_sandbox.py. Run inside the
// lightorgan-receiver unit's sandbox (systemd-run with the unit's properties) each should be refused; run as
// the same user without the sandbox (the control) each should be allowed: so a refusal is the sandbox's.
// Built static on the test machine (cc -static), so it runs in any root.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *errno_name(int error) {
    switch (error) {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOENT: return "ENOENT";
    case EROFS: return "EROFS";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    default: return strerror(error);
    }
}

static void report(const char *name, int failed) {
    printf("%s %s\n", name, failed ? errno_name(errno) : "ok");
}

int main(void) {
    // A system call outside @system-service (ptrace is in @debug): the filter answers EPERM.
    report("ptrace", ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1);
    // LockPersonality: no other execution domain.
    int persona = personality(PER_LINUX32);
    report("personality", persona == -1);
    if (persona != -1) personality(persona);
    // RestrictNamespaces: no user namespace (the way into every other kind).
    report("unshare-user", unshare(CLONE_NEWUSER) == -1);
    // RestrictAddressFamilies: packet sockets are not among INET, INET6, UNIX, NETLINK. The filter answers
    // EAFNOSUPPORT; without it an unprivileged user gets EPERM (no CAP_NET_RAW) from the kernel itself.
    int packet = socket(AF_PACKET, SOCK_DGRAM, 0);
    report("socket-packet", packet == -1);
    if (packet != -1) close(packet);
    // ... while netlink (getifaddrs) is.
    int netlink = socket(AF_NETLINK, SOCK_RAW, 0);
    report("socket-netlink", netlink == -1);
    if (netlink != -1) close(netlink);
    // MemoryDenyWriteExecute: no memory both writable and executable.
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    report("mmap-wx", page == MAP_FAILED);
    if (page != MAP_FAILED) munmap(page, 4096);
    // ProtectProc=invisible: PID 1 (root's) is not there; ProcSubset=pid: nor is the system's information.
    report("proc-pid-1", access("/proc/1/status", F_OK) == -1);
    report("proc-cpuinfo", access("/proc/cpuinfo", F_OK) == -1);
    int processes = 0;
    DIR *proc = opendir("/proc");
    for (struct dirent *entry; proc && (entry = readdir(proc));) {
        if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9') processes++;
    }
    if (proc) closedir(proc);
    printf("proc-processes %d\n", processes);
    // DevicePolicy=closed: a device the unit does not allow (the tun device is everyone's, 0666).
    int tun = open("/dev/net/tun", O_RDWR);
    report("open-tun", tun == -1);
    if (tun != -1) close(tun);
    // The capability bounding set and the umask the unit gives.
    mode_t mask = umask(0);
    umask(mask);
    printf("umask %04o\n", mask);
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    while (status && fgets(line, sizeof line, status)) {
        if (!strncmp(line, "CapBnd:", 7) || !strncmp(line, "Seccomp:", 8) || !strncmp(line, "NoNewPrivs:", 11)) {
            fputs(line, stdout);
        }
    }
    if (status) fclose(status);
    return 0;
}
