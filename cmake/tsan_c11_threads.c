/* ThreadSanitizer builds only (CMakeLists.txt links this into every executable).
 *
 * librdkafka uses C11 threads: thrd_create, mtx_lock, cnd_wait and friends. glibc
 * implements them without going through the pthread functions that gcc 12's (and
 * clang 14's) TSan runtime intercepts, so under TSan librdkafka's threads crash in
 * TSan's malloc on their first allocation, and its locks are invisible (every
 * hand-over between its threads and ours looks like a race). These definitions,
 * exported by the executable, win over glibc's and map each call onto its pthread
 * equivalent — as glibc does internally: thrd_t is a pthread_t, mtx_t and cnd_t
 * have the sizes of pthread_mutex_t and pthread_cond_t. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t is a pthread_mutex_t");
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t is a pthread_cond_t");
_Static_assert(sizeof(thrd_t) == sizeof(pthread_t), "thrd_t is a pthread_t");

static int from_errno(int rc) {
  switch (rc) {
    case 0: return thrd_success;
    case EBUSY: return thrd_busy;
    case ETIMEDOUT: return thrd_timedout;
    case ENOMEM: return thrd_nomem;
    default: return thrd_error;
  }
}

struct seismo_c11_start {
  thrd_start_t func;
  void* arg;
};

static void* seismo_c11_trampoline(void* p) {
  struct seismo_c11_start start = *(struct seismo_c11_start*)p;
  free(p);
  /* glibc's thrd_join reads the int result back out of this pointer. */
  return (void*)(intptr_t)start.func(start.arg);
}

int thrd_create(thrd_t* thr, thrd_start_t func, void* arg) {
  struct seismo_c11_start* start = malloc(sizeof *start);
  if (start == NULL) return thrd_nomem;
  start->func = func;
  start->arg = arg;
  int rc = pthread_create((pthread_t*)thr, NULL, seismo_c11_trampoline, start);
  if (rc != 0) free(start);
  return from_errno(rc);
}

int thrd_join(thrd_t thr, int* res) {
  void* result = NULL;
  int rc = pthread_join((pthread_t)thr, &result);
  if (rc == 0 && res != NULL) *res = (int)(intptr_t)result;
  return from_errno(rc);
}

int thrd_detach(thrd_t thr) { return from_errno(pthread_detach((pthread_t)thr)); }

int mtx_init(mtx_t* m, int type) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  if (type & mtx_recursive) pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  int rc = pthread_mutex_init((pthread_mutex_t*)m, &attr);
  pthread_mutexattr_destroy(&attr);
  return from_errno(rc);
}
int mtx_lock(mtx_t* m) { return from_errno(pthread_mutex_lock((pthread_mutex_t*)m)); }
int mtx_trylock(mtx_t* m) { return from_errno(pthread_mutex_trylock((pthread_mutex_t*)m)); }
int mtx_timedlock(mtx_t* restrict m, const struct timespec* restrict ts) {
  return from_errno(pthread_mutex_timedlock((pthread_mutex_t*)m, ts));
}
int mtx_unlock(mtx_t* m) { return from_errno(pthread_mutex_unlock((pthread_mutex_t*)m)); }
void mtx_destroy(mtx_t* m) { pthread_mutex_destroy((pthread_mutex_t*)m); }

int cnd_init(cnd_t* c) { return from_errno(pthread_cond_init((pthread_cond_t*)c, NULL)); }
int cnd_signal(cnd_t* c) { return from_errno(pthread_cond_signal((pthread_cond_t*)c)); }
int cnd_broadcast(cnd_t* c) { return from_errno(pthread_cond_broadcast((pthread_cond_t*)c)); }
int cnd_wait(cnd_t* c, mtx_t* m) { return from_errno(pthread_cond_wait((pthread_cond_t*)c, (pthread_mutex_t*)m)); }
int cnd_timedwait(cnd_t* restrict c, mtx_t* restrict m, const struct timespec* restrict ts) {
  return from_errno(pthread_cond_timedwait((pthread_cond_t*)c, (pthread_mutex_t*)m, ts));
}
void cnd_destroy(cnd_t* c) { pthread_cond_destroy((pthread_cond_t*)c); }

void call_once(once_flag* flag, void (*func)(void)) { pthread_once((pthread_once_t*)flag, func); }
