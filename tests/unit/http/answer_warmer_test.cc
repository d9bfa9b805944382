#include "seismo/http/answer_warmer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "support/wait_for.h"

namespace seismo {
namespace {

using namespace std::chrono_literals;

class OneSnapshot final : public StateProvider {
 public:
  explicit OneSnapshot(std::shared_ptr<const Snapshot> snap) : snap_(std::move(snap)) {}
  std::shared_ptr<const Snapshot> snapshot() const override { return snap_; }
  RecordCounts counts() const override { return {}; }
  ServiceStatus status() const override { return {}; }
  std::string alerts_json() const override { return "[]"; }

 private:
  std::shared_ptr<const Snapshot> snap_;
};

std::shared_ptr<const Snapshot> At(int64_t ms) {
  auto s = std::make_shared<Snapshot>();
  s->built_at_ms = ms;
  return s;
}

// Offers never wait for a round; the warm-up always reaches the newest offered snapshot,
// and a request for a default answer is then served from the cache.
TEST(AnswerWarmer, WarmsTheNewestOfferedSnapshot) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(64u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  EXPECT_EQ(warmer.warmed(), nullptr) << "nothing before the first round";
  std::vector<std::shared_ptr<const Snapshot>> snaps;
  for (int i = 1; i <= 50; ++i) {
    snaps.push_back(At(i));
    warmer.Offer(snaps.back());
  }
  ASSERT_TRUE(test::WaitFor([&] { return warmer.warmed() == snaps.back(); }, 30s, 1ms));
  EXPECT_GE(warmer.rounds(), 1u);
  EXPECT_LE(warmer.rounds(), 50u);
  OneSnapshot provider(snaps.back());
  const uint64_t hits = cache.hits();
  EXPECT_EQ(AnswerApi("/api/v1/builds", "", provider, settings, 0, &cache, &budget, warmer.warmed()).status,
            200);
  EXPECT_EQ(cache.hits(), hits + 1) << "built by the warm-up";
  EXPECT_EQ(budget.in_use(), 0u) << "the warm-up gave back what it reserved";
}

// Stop ends the thread; later offers are ignored and Stop may run again.
TEST(AnswerWarmer, StopsAndIgnoresLaterOffers) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(64u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  auto first = At(1);
  warmer.Offer(first);
  ASSERT_TRUE(test::WaitFor([&] { return warmer.warmed() == first; }, 30s, 1ms));
  warmer.Stop();
  warmer.Offer(At(2));
  warmer.Stop();
  EXPECT_EQ(warmer.warmed(), first);
  EXPECT_EQ(warmer.rounds(), 1u);
}

}  // namespace
}  // namespace seismo
