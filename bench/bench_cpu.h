/* CPU pinning, CPU time and resident memory for the benches: the client on one core, its server on
 * another. Header-only (static functions) because each bench/bench_*.c is a program of its own. */
#ifndef STAMPEDE_BENCH_CPU_H
#define STAMPEDE_BENCH_CPU_H

#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Pins process pid (0: the caller) to one CPU; best effort. */
static inline void bench_cpu_pin(pid_t pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(pid, sizeof(set), &set);
}

/* The system (kernel) part of a getrusage result, in seconds. */
static inline double bench_cpu_sys_seconds(const struct rusage *u) {
    return (double)u->ru_stime.tv_sec + u->ru_stime.tv_usec / 1e6;
}

/* User + system seconds of a getrusage result. */
static inline double bench_cpu_seconds(const struct rusage *u) {
    return (double)u->ru_utime.tv_sec + u->ru_utime.tv_usec / 1e6 + bench_cpu_sys_seconds(u);
}

/* The calling thread's CPU time in nanoseconds. */
static inline double bench_cpu_thread_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The process's resident memory in KiB (0 when /proc cannot tell); with anon_kb, the part of it
 * that is no file's: the heap and other private memory, without the code and data pages of the
 * binary and its libraries, which every process of the node shares and which do not grow with
 * the work done. */
static inline long bench_cpu_rss_split_kb(long *anon_kb) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0, shared = 0;
    if (f) {
        if (fscanf(f, "%ld %ld %ld", &size, &resident, &shared) != 3)
            resident = shared = 0;
        fclose(f);
    }
    long page_kb = sysconf(_SC_PAGESIZE) / 1024;
    if (anon_kb)
        *anon_kb = (resident - shared) * page_kb;
    return resident * page_kb;
}

/* Voluntary context switches of process pid so far (its waits that slept), from
 * /proc/PID/status; -1 when /proc cannot tell. A server's count over a window says how its
 * tokens were spread in time: the fewer its wake-ups a token, the more tokens each of its writes
 * carries out together, and the fewer wake-ups the client needs to read them. */
static inline long bench_cpu_sleeps(pid_t pid) {
    char path[64], line[128];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long sleeps = -1;
    if (!f)
        return -1;
    while (sleeps < 0 && fgets(line, sizeof(line), f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &sleeps) != 1)
            sleeps = -1;
    fclose(f);
    return sleeps;
}

static inline long bench_cpu_rss_kb(void) {
    return bench_cpu_rss_split_kb(NULL);
}

#endif
