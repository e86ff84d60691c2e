// The BPE oracle: Hugging Face tokenizers (the Rust library, through its
// Node binding). Reads {tokenizer, texts, decode: [{ids, skip}]} as JSON on
// stdin; writes {ids: [[...] per text], decoded: [string per decode]}.
'use strict';
const fs = require('fs');
const { Tokenizer } = require('@anush008/tokenizers');

async function main() {
  const spec = JSON.parse(fs.readFileSync(0, 'utf8'));
  const tok = Tokenizer.fromFile(spec.tokenizer);
  const ids = [];
  for (const text of spec.texts || []) {
    const enc = await tok.encode(text, null, { addSpecialTokens: true });
    ids.push(enc.getIds());
  }
  const decoded = [];
  for (const d of spec.decode || []) decoded.push(await tok.decode(d.ids, d.skip));
  process.stdout.write(JSON.stringify({ ids, decoded }));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
