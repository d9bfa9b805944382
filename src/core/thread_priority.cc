#include "seismo/core/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace seismo {
namespace {

// On Linux, PRIO_PROCESS with a thread id acts on that thread alone.
id_t ThisThreadId() { return static_cast<id_t>(syscall(SYS_gettid)); }

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

}  // namespace seismo
