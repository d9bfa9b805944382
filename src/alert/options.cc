#include "seismo/alert/options.h"

namespace seismo {

std::string_view ExposureModeName(ExposureMode m) {
  return m == ExposureMode::kCrashShare ? "crash_share" : "usage_hours";
}

BaselinePolicy BaselinePolicyOf(const AlertOptions& options) {
  return {options.baseline_builds, options.min_baseline_builds, options.min_baseline_usage_hours,
          options.age_matched};
}

}  // namespace seismo
