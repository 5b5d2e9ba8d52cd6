/* deny NR[,NR...] ERRNO CMD [ARGS...]: runs CMD with the listed system calls failing
 * with ERRNO (a seccomp filter, inherited by every child), as a container's profile or
 * a hardened kernel would refuse them. Used by tests/limits.rs. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: deny NR[,NR...] ERRNO CMD [ARGS...]\n");
        return 2;
    }
    int nums[64], n = 0;
    char *list = strdup(argv[1]);
    for (char *t = strtok(list, ","); t && n < 64; t = strtok(NULL, ","))
        nums[n++] = atoi(t);
    int err = atoi(argv[2]);
    struct sock_filter f[4 + 2 * 64 + 1];
    int k = 0;
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch));
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, nr));
    for (int i = 0; i < n; i++) {
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nums[i], 0, 1);
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                              SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
    }
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("deny: seccomp");
        return 2;
    }
    execvp(argv[3], argv + 3);
    perror("deny: exec");
    return 127;
}
