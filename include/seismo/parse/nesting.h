// NestsDeeperThan: the too_deep check (ingest.max_depth), over a document's bytes. On-Demand
// checks depth only in the parts it reads, so every document is scanned once whole:
//
//   source thread: AddDocument ──copy into its chunk, then scan it (hot in cache)──>
//                  DocRef::nesting ──DocHints──> Parser (no second scan: ADR 0042)
//   elsewhere:     Parser::ParseInto scans it itself
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace seismo {

// True when containers nest deeper than `max_depth` anywhere in `json` ({ and [ outside
// strings; a backslash in a string escapes the next byte). 64 bytes at a time.
bool NestsDeeperThan(std::string_view json, size_t max_depth);
// The paths NestsDeeperThan was built with: its blocks' vectors ("avx2", "sse2", or "bytes":
// none) and its prefix XOR ("pclmul" or "shifts"), as "avx2+pclmul". Tests check that the
// build they meant to test is the one they run.
std::string_view DepthScanKernel();

// A depth scan's verdict, carried with a document from where it was made to its parser.
struct Nesting {
  size_t max_depth = 0;  // the limit it was checked against; 0: not checked
  bool deeper = false;   // NestsDeeperThan(document, max_depth)
};

}  // namespace seismo
