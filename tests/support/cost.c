/* cost N CMD [ARGS...]: runs CMD with every system call paying a seccomp filter of
 * about N instructions (one filter per 4,000, each inherited by every child), a real
 * kernel-side cost of chosen size, as a tracer or a policy would add. Each filter loads
 * the call's first argument, which the kernel's constant-action cache cannot skip, runs
 * a chain of comparisons that never match, and allows the call. N = 0 runs CMD with no
 * filter by the same exec path. Used by tests/bisect.rs; scripts/kcost.py calibrates it. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { PER_FILTER = 4000 };

static int install(long n) {
    static struct sock_filter f[PER_FILTER + 2];
    long k = 0;
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, args[0]));
    for (long i = 0; i < n; i++)
        /* The low word of an argument is never this: fall through to the next. */
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xfee1deadu, 0, 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: cost N CMD [ARGS...]\n");
        return 127;
    }
    char *end;
    errno = 0;
    long n = strtol(argv[1], &end, 10);
    if (errno || end == argv[1] || *end || n < 0 || n > 64 * PER_FILTER) {
        fprintf(stderr, "cost: N is a whole number from 0 to %d, not '%s'\n",
                64 * PER_FILTER, argv[1]);
        return 127;
    }
    if (n > 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("cost: no_new_privs");
        return 127;
    }
    for (long left = n; left > 0; left -= PER_FILTER) {
        if (install(left < PER_FILTER ? left : PER_FILTER) != 0) {
            perror("cost: seccomp");
            return 127;
        }
    }
    execvp(argv[2], argv + 2);
    perror("cost: exec");
    return 127;
}
