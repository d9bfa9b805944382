#include "seismo/core/thread_owner.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace seismo {

void ThreadOwner::Fail(const char* what) const {
  std::ostringstream threads;
  threads << "thread " << std::this_thread::get_id() << ", owned by thread " << owner_.load();
  std::fprintf(stderr, "seismo: %s called on %s\n", what, threads.str().c_str());
  std::abort();
}

}  // namespace seismo
