#include "seismo/shard/dead_letter.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

TEST(DeadLetter, CarriesReasonProvenanceAndTheDocument) {
  EXPECT_EQ(
      FormatDeadLetter({RejectReason::kBadUsage, "telemetry.main", 3, 1234, R"({"a":"b"})"}),
      R"({"id":"telemetry.main:3:1234","reason":"bad_usage","source":"telemetry.main","partition":3,"offset":1234,)"
      R"("document":"{\"a\":\"b\"}"})");
}

TEST(DeadLetter, InvalidUtf8IsKeptExactlyAsBase64) {
  EXPECT_EQ(FormatDeadLetter({RejectReason::kInvalidUtf8, "f.ndjson", -1, 7,
                              "\xff\xfe"
                              "a"}),
            R"({"id":"f.ndjson:-1:7","reason":"invalid_utf8","source":"f.ndjson","partition":-1,"offset":7,)"
            R"("document_base64":"//5h"})");
}

TEST(DeadLetter, HugeDocumentsAreTruncatedWithTheirSize) {
  std::string doc(3 << 20, 'x');
  std::string letter = FormatDeadLetter({RejectReason::kTooLarge, "t", 0, 1, doc});
  EXPECT_LT(letter.size(), kMaxDeadLetterDocumentBytes + 200);
  EXPECT_NE(letter.find(R"("document_bytes":3145728,"truncated":true)"), std::string::npos);
}

// A document the reader cut (over max_document_bytes, never held whole): its first bytes and
// its real size.
TEST(DeadLetter, ACutDocumentSaysHowLargeItWas) {
  std::string letter =
      FormatDeadLetter({RejectReason::kTooLarge, "f.ndjson.zst", -1, 2, "{\"pad\":\"xx", 1610612736});
  EXPECT_EQ(letter,
            R"({"id":"f.ndjson.zst:-1:2","reason":"too_large","source":"f.ndjson.zst","partition":-1,)"
            R"("offset":2,"document_bytes":1610612736,"truncated":true,"document":"{\"pad\":\"xx"})");
}

// The id names the record a letter is about: equal for the copies written after a restart
// re-read it, different for every other record (the integers are the last two fields).
TEST(DeadLetter, TheIdIsStableAndUnique) {
  auto id = [](std::string_view source, int32_t partition, int64_t offset) {
    const std::string letter = FormatDeadLetter({RejectReason::kBadUsage, source, partition, offset, "{}"});
    return letter.substr(0, letter.find(",\"reason\""));
  };
  EXPECT_EQ(id("telemetry.main", 3, 1234), id("telemetry.main", 3, 1234));
  EXPECT_NE(id("telemetry.main", 3, 1234), id("telemetry.main", 31, 234));
  EXPECT_NE(id("a:1", 2, 3), id("a", 1, 23));
  EXPECT_NE(id("telemetry.main", 3, 1234), id("telemetry.bhr", 3, 1234));
}

}  // namespace
}  // namespace seismo
