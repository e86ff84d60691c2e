#!/usr/bin/python3
"""Train the SentencePiece BPE tokenizer.model with Cohere's special pieces at ids 1..254.

usage: tokenizer.py OUT.model [--vocab-size 1024] [--sentences 60000] [--seed 1234]
                    [--cohere ../shared/data/cohere_asr_base/tokenizer.model]

Layout (spec §1.4 / §7.1 option b): 0 <unk>, 1..254 USER_DEFINED = the Cohere pieces in
Cohere order (read from the real tokenizer), 255..510 byte pieces <0x00>..<0xFF>
(byte_fallback), then BPE pieces. bos/eos -1 and add_dummy_prefix as the real one, so
the Danish prompt text encodes to [id('▁'), 7, 4, 16, 58, 58, 5, 9, 11, 13] exactly as with
Hviske's tokenizer. Trained on train-split sentences only (held-out sentences never seen);
checked on both held-out sets (eval split and heldout_da.py).
"""
import argparse
import io
import os
import sys

import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout_da  # noqa: E402
import text_da  # noqa: E402

# the data folder beside the checkout, or $AUDIOC_DATA
COHERE = os.path.join(os.environ.get("AUDIOC_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                 "../../shared/data")),
                      "cohere_asr_base/tokenizer.model")
PROMPT = ("<|startofcontext|><|startoftranscript|><|emo:undefined|><|da|><|da|><|pnc|><|noitn|>"
          "<|notimestamp|><|nodiarize|>")


def cohere_specials(path):
    sp = spm.SentencePieceProcessor(model_file=path)
    specials = [sp.id_to_piece(i) for i in range(1, 255)]
    assert all(sp.is_control(i) or sp.IdToPiece(i).startswith("<") for i in range(1, 255))
    return specials


def train(out, vocab_size, sentences, specials):
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=buf, model_type="bpe",
        vocab_size=vocab_size, user_defined_symbols=specials, byte_fallback=True,
        unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1, character_coverage=1.0,
        normalization_rule_name="identity",  # keeps the file small; our text is already clean
        remove_extra_whitespaces=False, add_dummy_prefix=True, split_digits=True,
        num_threads=2, input_sentence_size=len(sentences), shuffle_input_sentence=False,
        minloglevel=2)
    with open(out, "wb") as f:
        f.write(buf.getvalue())


def verify(path, cohere_path, sample):
    sp, ref = spm.SentencePieceProcessor(model_file=path), spm.SentencePieceProcessor(model_file=cohere_path)
    for i in range(1, 255):
        assert sp.id_to_piece(i) == ref.id_to_piece(i), i
    assert sp.id_to_piece(255) == "<0x00>" and sp.id_to_piece(510) == "<0xFF>"
    ids = sp.encode(PROMPT)
    want = [sp.piece_to_id("\u2581"), 7, 4, 16, 58, 58, 5, 9, 11, 13]
    assert ids == want, (ids, want)
    assert ref.encode(PROMPT) == [ref.piece_to_id("\u2581"), 7, 4, 16, 58, 58, 5, 9, 11, 13]
    n_byte = 0
    for s in sample:
        ids = sp.encode(s)
        assert sp.decode(ids) == s, (s, sp.decode(ids))
        n_byte += sum(1 for i in ids if 255 <= i <= 510)
    print(f"tokenizer ok: {sp.get_piece_size()} pieces, prompt {want}, "
          f"{sum(len(sp.encode(s)) for s in sample) / len(sample):.1f} tokens/sentence, "
          f"{n_byte} byte-fallback tokens in {len(sample)} sentences, "
          f"{os.path.getsize(path)} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--vocab-size", type=int, default=1024)
    ap.add_argument("--sentences", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--word-strings", type=float, default=0.0, help="as synth.py's: the training text's mix")
    ap.add_argument("--compose", type=float, default=0.0, help="as synth.py's")
    ap.add_argument("--cohere", default=COHERE)
    ap.add_argument("--vocab", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary_da.txt"))
    a = ap.parse_args()
    v = text_da.Vocab(a.vocab)
    sents = text_da.sentences("train", a.sentences, a.seed, v, word_strings=a.word_strings, compose=a.compose)
    # The vocabulary's words once each, so rare words still get pieces; with word strings, also
    # every word they draw from.
    sents += [w for k in v.cat for w in v[k]] + (text_da.training_words(v) if a.word_strings > 0 else [])
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    train(a.out, a.vocab_size, sents, cohere_specials(a.cohere))
    verify(a.out, a.cohere, text_da.sentences("eval", 500, a.seed, v) + [t for _, t, _ in heldout_da.items(40, a.seed, v)])


if __name__ == "__main__":
    main()
