// DeferredRelease: a wrapped object is freed once, when its last hold goes away, on the
// release thread while it runs and on the spot after Stop(); a hold keeps the release
// thread's owner alive.
#include "seismo/core/deferred_release.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace seismo {
namespace {

constexpr auto kPatience = std::chrono::seconds(60);

// Tells which thread freed it.
struct Freed {
  explicit Freed(std::promise<std::thread::id>* freed_on) : freed_on(freed_on) {}
  ~Freed() { freed_on->set_value(std::this_thread::get_id()); }
  std::promise<std::thread::id>* freed_on;
};

TEST(DeferredRelease, TheLastHoldGoingAwayFreesTheObjectOnTheReleaseThread) {
  auto release = DeferredRelease::Start();
  std::promise<std::thread::id> freed_on;
  std::future<std::thread::id> freed = freed_on.get_future();
  std::shared_ptr<const Freed> hold = release->Wrap<const Freed>(std::make_shared<const Freed>(&freed_on));
  std::shared_ptr<const Freed> copy = hold;
  hold.reset();
  // A copy still holds it: nothing was handed over.
  EXPECT_EQ(freed.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(release->released(), 0u);
  copy.reset();
  ASSERT_EQ(freed.wait_for(kPatience), std::future_status::ready);
  EXPECT_NE(freed.get(), std::this_thread::get_id());
  // released() counts after the free: wait for it rather than race it.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (release->released() != 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(release->released(), 1u);
}

TEST(DeferredRelease, AfterStopTheLastHoldFreesTheObjectOnTheSpot) {
  auto release = DeferredRelease::Start();
  std::promise<std::thread::id> freed_on;
  std::future<std::thread::id> freed = freed_on.get_future();
  std::shared_ptr<const Freed> hold = release->Wrap<const Freed>(std::make_shared<const Freed>(&freed_on));
  release->Stop();
  hold.reset();
  ASSERT_EQ(freed.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(freed.get(), std::this_thread::get_id());
  EXPECT_EQ(release->released(), 0u);
}

TEST(DeferredRelease, AHoldKeepsTheReleaseAliveAfterItsOwnerLetGo) {
  std::promise<std::thread::id> freed_on;
  std::future<std::thread::id> freed = freed_on.get_future();
  std::weak_ptr<DeferredRelease> watch;
  std::shared_ptr<const Freed> hold;
  {
    auto release = DeferredRelease::Start();
    watch = release;
    hold = release->Wrap<const Freed>(std::make_shared<const Freed>(&freed_on));
  }
  EXPECT_FALSE(watch.expired());
  hold.reset();
  ASSERT_EQ(freed.wait_for(kPatience), std::future_status::ready);
  EXPECT_NE(freed.get(), std::this_thread::get_id());
  // The hold's deleter held the last reference: the release was destroyed (and joined) with it.
  EXPECT_TRUE(watch.expired());
}

TEST(DeferredRelease, AWeakPointerToAHoldDoesNotKeepTheReleaseAlive) {
  std::promise<std::thread::id> freed_on;
  std::future<std::thread::id> freed = freed_on.get_future();
  std::weak_ptr<DeferredRelease> watch;
  std::weak_ptr<const Freed> watch_hold;
  {
    auto release = DeferredRelease::Start();
    watch = release;
    auto hold = release->Wrap<const Freed>(std::make_shared<const Freed>(&freed_on));
    watch_hold = hold;
  }
  ASSERT_EQ(freed.wait_for(kPatience), std::future_status::ready);
  EXPECT_TRUE(watch_hold.expired());
  EXPECT_TRUE(watch.expired());
}

TEST(DeferredRelease, ANullObjectStaysNull) {
  auto release = DeferredRelease::Start();
  EXPECT_EQ(release->Wrap(std::shared_ptr<int>()), nullptr);
}

}  // namespace
}  // namespace seismo
