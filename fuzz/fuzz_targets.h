// The bodies of the libFuzzer targets, shared by the fuzzers (parse_fuzz.cc,
// signature_fuzz.cc, aggregates_fuzz.cc, query_fuzz.cc) and by the corpus regression tests
// (tests/unit/parse/fuzz_corpus_test.cc; tests/unit/query/fuzz_corpus_test.cc for the query
// target, in query_target.cc), so an input saved into
// fuzz/corpus/<target>/ (a seed, or a crash the fuzzer found) runs through
// exactly the code the fuzzer ran, on every test run.
//
// Each function takes any bytes and returns "" when every invariant held, or
// a description of the first one that did not; the fuzzers abort on it, the
// test reports it. A crash (or a sanitizer finding) is a crash in both.
//
// Threading: one call at a time per thread (the document parser is per thread).
#pragma once

#include <string>
#include <string_view>

namespace seismo::fuzz {

// Any bytes through the document parser (without and with each topic kind),
// then into deltas; checks the parser's contract on what it accepts.
std::string ParseTarget(std::string_view data);

// Any bytes as crash-data JSON (any of the three shapes) through the
// signature generator; checks the clean-up rules' output invariants, then
// through the document-level crash parser in both formats.
std::string SignatureTarget(std::string_view data);

// Any bytes as one aggregates-topic record (cluster/record.h): the first byte is the
// key's length (its high bit set: a null value), then the key, then the value. A
// decoded record re-encodes to a value that decodes to the same bytes again, under
// the same key.
std::string AggregatesRecordTarget(std::string_view data);

// Any bytes as requests to the HTTP API's answers (query/api.h AnswerApi) over a small world
// of generated documents (query_target.cc): the first byte picks the path (every API path,
// and one that is none), the second the answer bounds (small: 512 bytes to 64 KiB, 1 to 249
// nodes), the rest is the raw query string, or two split at the first newline. Each answer
// is 200, 400 or 404 and JSON, a view's within the byte bound; the same request gives the
// same answer, and through a cache that holds the other query's answer too.
std::string QueryTarget(std::string_view data);

}  // namespace seismo::fuzz
