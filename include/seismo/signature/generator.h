// SignatureGenerator: Socorro-compatible crash signatures (reference
// socorro-signatures.md, pinned to mozilla-services/socorro 7e28d72b).
//
// Generate() runs Socorro's default ruleset in order, starting from "":
//    1 SignatureGenerationRule        stack signature (Java trace, Java
//                                     exception, or C/C++/Rust stack walk)
//    2 StackwalkerErrorSignatureRule  "EMPTY…; <mdsw_status_string>"
//    3 BadHardware                    "bad hardware | …"
//    4 OOMSignature                   "OOM | small" / "OOM | large | …" / "OOM | unknown | …"
//    5 AbortSignature                 "Abort | <message> | …"
//    6 SignatureShutdownTimeout       "AsyncShutdownTimeout | <phase> | <conditions>"
//    7 SignatureRunWatchDog           "shutdownhang | <thread 0 signature>"
//    8 SignatureIPCChannelError       "IPCError-browser|content | <error>"
//    9 SignatureIPCMessageName        "… | IPC_Message_Name=<name>"
//   10 StackOverflowSignature         "stackoverflow | …"
//   11 HungProcess                    "hang: <hang> | …"
//   12 SigPrintableCharsOnly          keep U+0020..U+007E only
//   13 SigFixWhitespace               trim, collapse runs of spaces
//   14 SigTruncate                    255 characters at most ("…" + "...")
// A rule that would raise in Socorro (bad input) leaves the signature as it
// was and adds the note "<Rule>: Rule failed: <reason>", as Socorro does.
//
// Ownership: create once at start-up (lists are compiled then), share by
// const reference. Threading: Generate() is safe to call from many threads at
// once; it allocates only per call and keeps PCRE2 match data per thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seismo/core/status.h"
#include "seismo/signature/crash_data.h"
#include "seismo/signature/siglists.h"

namespace seismo {

struct SignatureResult {
  std::string signature;        // "" only when every input frame was empty or a rule failed
  std::string proto_signature;  // all normalised frames joined by " | " ("" if none)
  std::vector<std::string> notes;  // Socorro's processor notes, "<Rule>: <text>"
};

class SignatureGenerator {
 public:
  // Lists embedded at build time (config/siglists/).
  static Result<std::unique_ptr<SignatureGenerator>> LoadDefault();
  // Lists read from `dir` now; errors name the file and line.
  static Result<std::unique_ptr<SignatureGenerator>> LoadFromDir(const std::string& dir);
  explicit SignatureGenerator(std::unique_ptr<SigLists> lists);
  ~SignatureGenerator();

  SignatureResult Generate(const CrashData& crash) const;

  const SigLists& lists() const { return *lists_; }

 private:
  std::unique_ptr<SigLists> lists_;
};

}  // namespace seismo
