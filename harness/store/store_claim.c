/* store_claim.c — claims on runs being computed, expiring with the process that made them. */
#include "store_internal.h"

#include "core/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Who a claim belongs to. */
typedef struct store_owner {
    char host[256];
    char boot_id[64];
    long long pid;
    long long start_time; /* clock ticks after boot (/proc/<pid>/stat field 22); -1 unknown */
} store_owner;

/* The start time of a process, or -1 when it does not exist (or cannot be read). */
static long long store_claim_start_time(long long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and parentheses: count from the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    for (int field = 2; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoll(p + 1, NULL, 10) : -1;
}

static void store_claim_me(store_owner *me)
{
    memset(me, 0, sizeof *me);
    if (gethostname(me->host, sizeof me->host - 1) != 0)
        snprintf(me->host, sizeof me->host, "unknown");
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(me->boot_id, sizeof me->boot_id, f))
        snprintf(me->boot_id, sizeof me->boot_id, "unknown");
    if (f)
        fclose(f);
    me->boot_id[strcspn(me->boot_id, "\n")] = '\0';
    me->pid = (long long)getpid();
    me->start_time = store_claim_start_time(me->pid);
}

/* Whether the claim's owner still exists, as far as this host can tell. */
static int store_claim_alive(const store_owner *me, const char *host, const char *boot_id,
                             long long pid, long long start_time)
{
    if (strcmp(host, me->host) != 0)
        return 1; /* another machine's process: nothing here can tell */
    if (strcmp(boot_id, me->boot_id) != 0)
        return 0; /* made before this machine last booted */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    return store_claim_start_time(pid) == start_time; /* else the pid was reused */
}

static int store_claim_is_me(const store_owner *me, const char *host, const char *boot_id,
                             long long pid, long long start_time)
{
    return strcmp(host, me->host) == 0 && strcmp(boot_id, me->boot_id) == 0 && pid == me->pid &&
           start_time == me->start_time;
}

/* STORE_CLAIM_STORED when run_id is stored, STORE_CLAIM_HELD when a live other process claims
 * it, else STORE_CLAIM_TAKEN; inside the caller's transaction. */
static int store_claim_look(store *s, const store_owner *me, const char *run_id, int *outcome,
                            pb_error *err)
{
    *outcome = store_has_run(s, run_id) ? STORE_CLAIM_STORED : STORE_CLAIM_TAKEN;
    if (*outcome == STORE_CLAIM_STORED)
        return PB_OK;
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT host, boot_id, pid, start_time FROM claim WHERE run_id = ?", &st,
                      err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *host = (const char *)sqlite3_column_text(st, 0);
        const char *boot = (const char *)sqlite3_column_text(st, 1);
        long long pid = sqlite3_column_int64(st, 2), start = sqlite3_column_int64(st, 3);
        if (host && boot && !store_claim_is_me(me, host, boot, pid, start) &&
            store_claim_alive(me, host, boot, pid, start))
            *outcome = STORE_CLAIM_HELD;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_sql_error(s, "reading claims", err);
    return PB_OK;
}

static int store_claim_write(store *s, const store_owner *me, const char *run_id, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s,
                      "INSERT OR REPLACE INTO claim(run_id, host, boot_id, pid, start_time, "
                      "claimed_at) VALUES(?, ?, ?, ?, ?, ?)",
                      &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, me->host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, me->boot_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, me->pid);
    sqlite3_bind_int64(st, 5, me->start_time);
    sqlite3_bind_double(st, 6, pb_clock_seconds(CLOCK_REALTIME));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "writing a claim", err);
}

int store_claim_run(store *s, const char *run_id, int *outcome, pb_error *err)
{
    store_owner me;
    store_claim_me(&me);
    if (store_exec(s, "BEGIN IMMEDIATE", err))
        return PB_ERR;
    if (store_claim_look(s, &me, run_id, outcome, err))
        return store_rollback(s);
    if (*outcome == STORE_CLAIM_TAKEN && store_claim_write(s, &me, run_id, err))
        return store_rollback(s);
    return store_exec(s, "COMMIT", err) ? store_rollback(s) : PB_OK;
}

int store_unclaim(store *s, const char *run_id, pb_error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "DELETE FROM claim WHERE run_id = ?", &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "removing a claim", err);
}

int store_release_claims(store *s, pb_error *err)
{
    store_owner me;
    store_claim_me(&me);
    sqlite3_stmt *st;
    if (store_prepare(s,
                      "DELETE FROM claim WHERE host = ? AND boot_id = ? AND pid = ? AND "
                      "start_time = ?",
                      &st, err))
        return PB_ERR;
    sqlite3_bind_text(st, 1, me.host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, me.boot_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, me.pid);
    sqlite3_bind_int64(st, 4, me.start_time);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PB_OK : store_sql_error(s, "releasing claims", err);
}
