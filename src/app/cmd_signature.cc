// `seismo signature [FILE|-] [--json] [--siglists DIR]`: one Socorro-compatible
// signature per input line. Each line is a crash-data dict, a Socorro processed
// crash (has `json_dump`) or a Telemetry crash ping (`type == "crash"`). A line
// that is not a crash document prints an empty line (`{"error": "<reason>"}`
// with --json) so output lines stay aligned with input lines.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "seismo/app/command.h"
#include "seismo/core/json_writer.h"
#include "seismo/parse/crash_parser.h"
#include "seismo/signature/generator.h"

namespace seismo {
namespace {

struct SignatureArgs {
  std::string input = "-";
  bool json = false;
  std::string siglists;
};

std::string FormatLine(const SignatureGenerator& gen, std::string_view line, bool json) {
  ParseResult<CrashData> data = CrashDataFromAnyJson(line);
  if (!data.ok()) {
    if (!json) return "";
    JsonWriter w;
    w.BeginObject().Key("error").String(RejectReasonName(data.reason())).EndObject();
    return w.Take();
  }
  SignatureResult r = gen.Generate(data.value());
  if (!json) return std::move(r.signature);
  JsonWriter w;
  w.BeginObject();
  w.Key("signature").String(r.signature);
  w.Key("proto_signature").String(r.proto_signature);
  w.Key("notes").BeginArray();
  for (const std::string& n : r.notes) w.String(n);
  w.EndArray().EndObject();
  return w.Take();
}

int RunSignature(const SignatureArgs& a) {
  Result<std::unique_ptr<SignatureGenerator>> gen =
      a.siglists.empty() ? SignatureGenerator::LoadDefault() : SignatureGenerator::LoadFromDir(a.siglists);
  if (!gen) {
    fmt::print(stderr, "seismo signature: {}\n", gen.error().message());
    return 2;
  }
  std::ifstream file;
  std::istream* in = &std::cin;
  if (a.input != "-") {
    file.open(a.input, std::ios::binary);
    if (!file) {
      fmt::print(stderr, "seismo signature: cannot open {}\n", a.input);
      return 2;
    }
    in = &file;
  }
  std::string line;
  std::string out;
  while (std::getline(*in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out = FormatLine(*gen.value(), line, a.json);
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

void RegisterSignatureCommand(CLI::App& root, CommandRunner* runner) {
  auto args = std::make_shared<SignatureArgs>();
  CLI::App* cmd = root.add_subcommand(
      "signature", "Print one Socorro-compatible signature per input crash document (NDJSON)");
  cmd->add_option("file", args->input, "NDJSON input: crash-data dicts, processed crashes or crash pings (- = stdin)");
  cmd->add_flag("--json", args->json, "Print {\"signature\", \"proto_signature\", \"notes\"} per line");
  cmd->add_option("--siglists", args->siglists, "Directory with the four signature lists (default: built in)");
  cmd->callback([args, runner] { *runner = [args] { return RunSignature(*args); }; });
}

}  // namespace seismo
