#include "seismo/core/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace seismo {
namespace {

// On Linux, PRIO_PROCESS with a thread id acts on that thread alone.
id_t ThisThreadId() { return static_cast<id_t>(syscall(SYS_gettid)); }

// The kernel's struct sched_attr as first defined (SCHED_ATTR_SIZE_VER0, 48 bytes, which
// every later kernel accepts): glibc before 2.41 has neither the struct nor a wrapper, and
// <linux/sched/types.h> cannot be included beside <sched.h>.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;  // SCHED_OTHER: the thread's turn (EEVDF's custom slice), in ns
  uint64_t sched_deadline;
  uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48);
static_assert(offsetof(SchedAttr, sched_runtime) == 24);
// Leave the thread's policy as it is (Linux 5.3): a thread run under `chrt` or systemd's
// CPUSchedulingPolicy= keeps it; a real-time one refuses the call (EINVAL).
constexpr uint64_t kSchedFlagKeepPolicy = 0x08;

}  // namespace

int ThisThreadNice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, ThisThreadId());
}

bool LowerThisThreadPriority(int nice_steps) {
  if (nice_steps <= 0) return true;
  const int now = ThisThreadNice();
  if (errno != 0) return false;
  return setpriority(PRIO_PROCESS, ThisThreadId(), std::min(19, now + nice_steps)) == 0;
}

bool RequestShortSlice(std::chrono::microseconds slice) {
  const int nice = ThisThreadNice();
  if (errno != 0) return false;
  SchedAttr attr{};
  attr.size = sizeof(attr);
  attr.sched_policy = SCHED_OTHER;
  attr.sched_flags = kSchedFlagKeepPolicy;
  attr.sched_nice = nice;  // sched_setattr sets the nice value too: the one the thread has
  attr.sched_runtime = static_cast<uint64_t>(std::chrono::nanoseconds(slice).count());
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

}  // namespace seismo
