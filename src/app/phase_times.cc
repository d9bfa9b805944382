#include "seismo/app/phase_times.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/resource.h>

namespace seismo {
namespace {

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

PhaseTimes::PhaseTimes()
    : start_(std::chrono::steady_clock::now()),
      last_(start_),
      start_cpu_(ProcessCpuSeconds()),
      last_cpu_(start_cpu_) {
  // Looked up once, never called on a hot path: only at the marks.
  counter_ = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "seismo_alloc_counter"));
  if (counter_ != nullptr) counter_(&last_count_, &last_bytes_);
}

void PhaseTimes::Mark(std::string_view name) {
  const auto now = std::chrono::steady_clock::now();
  const double cpu = ProcessCpuSeconds();
  Phase p{std::string(name), std::chrono::duration<double>(now - last_).count(), cpu - last_cpu_, 0, 0};
  last_cpu_ = cpu;
  if (counter_ != nullptr) {
    uint64_t count = 0, bytes = 0;
    counter_(&count, &bytes);
    p.allocations = count - last_count_;
    p.allocated_bytes = bytes - last_bytes_;
    last_count_ = count;
    last_bytes_ = bytes;
  }
  phases_.push_back(std::move(p));
  last_ = std::chrono::steady_clock::now();  // the counter's own time is not a phase's
}

double PhaseTimes::TotalSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string PhaseTimes::Json(std::string_view extra) const {
  std::string out = "{\"phases\":{";
  for (size_t i = 0; i < phases_.size(); ++i) {
    out += fmt::format("{}\"{}\":{:.6f}", i ? "," : "", phases_[i].name, phases_[i].seconds);
  }
  out += fmt::format("}},\"total_s\":{:.6f},\"cpu\":{{", TotalSeconds());
  for (size_t i = 0; i < phases_.size(); ++i) {
    out += fmt::format("{}\"{}\":{:.6f}", i ? "," : "", phases_[i].name, phases_[i].cpu_seconds);
  }
  out += fmt::format("}},\"total_cpu_s\":{:.6f}", ProcessCpuSeconds() - start_cpu_);
  if (counter_ != nullptr) {
    out += ",\"allocations\":{";
    for (size_t i = 0; i < phases_.size(); ++i) {
      out += fmt::format("{}\"{}\":{}", i ? "," : "", phases_[i].name, phases_[i].allocations);
    }
    out += "},\"allocated_bytes\":{";
    for (size_t i = 0; i < phases_.size(); ++i) {
      out += fmt::format("{}\"{}\":{}", i ? "," : "", phases_[i].name, phases_[i].allocated_bytes);
    }
    out += "}";
  }
  if (!extra.empty()) out += fmt::format(",{}", extra);
  out += "}";
  return out;
}

}  // namespace seismo
