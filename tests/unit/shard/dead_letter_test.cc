#include "seismo/shard/dead_letter.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

TEST(DeadLetter, CarriesReasonProvenanceAndTheDocument) {
  EXPECT_EQ(FormatDeadLetter({RejectReason::kBadUsage, "telemetry.main", 3, 1234, R"({"a":"b"})"}),
            R"({"reason":"bad_usage","source":"telemetry.main","partition":3,"offset":1234,"document":"{\"a\":\"b\"}"})");
}

TEST(DeadLetter, InvalidUtf8IsKeptExactlyAsBase64) {
  EXPECT_EQ(FormatDeadLetter({RejectReason::kInvalidUtf8, "f.ndjson", -1, 7, "\xff\xfe" "a"}),
            R"({"reason":"invalid_utf8","source":"f.ndjson","partition":-1,"offset":7,"document_base64":"//5h"})");
}

TEST(DeadLetter, HugeDocumentsAreTruncatedWithTheirSize) {
  std::string doc(3 << 20, 'x');
  std::string letter = FormatDeadLetter({RejectReason::kTooLarge, "t", 0, 1, doc});
  EXPECT_LT(letter.size(), kMaxDeadLetterDocumentBytes + 200);
  EXPECT_NE(letter.find(R"("document_bytes":3145728,"truncated":true)"), std::string::npos);
}

}  // namespace
}  // namespace seismo
