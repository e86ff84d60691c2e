#!/bin/bash
# End-to-end: text -> espeak-ng speech -> tokenizer -> training -> export -> evaluation.
# Reproducible (fixed seed); sized for 2 cores and <= 3 h in total by default.
#
#   train/train.sh [OUT]            (default OUT = train/out/full)
# Environment overrides (defaults in brackets):
#   SEED [1234] TRAIN_SEED [SEED; seeds the training text and audio only, eval and gen keep SEED]
#   N_TRAIN [30000] N_EVAL [300] N_GEN [40 per category] STEPS [40000] BUDGET_MIN [240] BATCH_SEC [30]
#   LR [2e-3] WARMUP [500] CTC_WEIGHT [0.5] SORTED_EPOCHS [1] SPECAUG [0] PROCS [2] ALIGN_WEIGHT [0.3] ALIGN_START [0]
#   WORD_STRINGS [0] COMPOSE [0] (the weights of text_da.gen_word_string and gen_compose in the training text)
#   DIMS ['{}', overrides of model.DEFAULT_DIMS] DTYPE [f16] AUDIOC [build/audioc]
#   INIT [none: a package (export.py's output) to fine-tune: its weights and its tokenizer]
# Outputs: OUT/{train,eval,gen}/ (wavs + manifest.jsonl), OUT/tokenizer.model, OUT/run/ (checkpoints,
# train_log.jsonl), OUT/package/ (the cohere_asr package), OUT/eval_report.json (the original
# held-out set), OUT/eval_gen_report.json (heldout_da.py's unseen phrasings, per category).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
OUT="${1:-$HERE/out/full}"
PY=/usr/bin/python3                      # Debian's: torch 1.13, numpy, sentencepiece
SEED="${SEED:-1234}"; TRAIN_SEED="${TRAIN_SEED:-$SEED}"; N_TRAIN="${N_TRAIN:-30000}"; N_EVAL="${N_EVAL:-300}"; N_GEN="${N_GEN:-40}"
STEPS="${STEPS:-40000}"; BUDGET_MIN="${BUDGET_MIN:-240}"; BATCH_SEC="${BATCH_SEC:-30}"
LR="${LR:-2e-3}"; WARMUP="${WARMUP:-500}"; CTC_WEIGHT="${CTC_WEIGHT:-0.5}"
SORTED_EPOCHS="${SORTED_EPOCHS:-1}"; ALIGN_WEIGHT="${ALIGN_WEIGHT:-0.3}"; ALIGN_START="${ALIGN_START:-0}"; SPECAUG="${SPECAUG:-0}"; PROCS="${PROCS:-2}"; DIMS="${DIMS:-{\}}"; DTYPE="${DTYPE:-f16}"
WORD_STRINGS="${WORD_STRINGS:-0}"; COMPOSE="${COMPOSE:-0}"; INIT="${INIT:-}"
AUDIOC="${AUDIOC:-$ROOT/build/audioc}"
mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }

if [ ! -x "$AUDIOC" ]; then
  stamp "building the engine"
  make -C "$ROOT" build >/dev/null
fi

$PY "$HERE/text_da.py" --selftest
$PY "$HERE/align_loss.py" --selftest
$PY "$HERE/heldout_da.py" --selftest --seed "$SEED"
[ -f "$OUT/train/manifest.jsonl" ] || { stamp "synthesizing $N_TRAIN training utterances";
  $PY "$HERE/synth.py" "$OUT/train" --split train -n "$N_TRAIN" --seed "$TRAIN_SEED" --word-strings "$WORD_STRINGS" --compose "$COMPOSE" --jobs 2; }
[ -f "$OUT/eval/manifest.jsonl" ] || { stamp "synthesizing $N_EVAL held-out utterances";
  $PY "$HERE/synth.py" "$OUT/eval" --split eval -n "$N_EVAL" --seed "$SEED" --jobs 2; }
[ -f "$OUT/gen/manifest.jsonl" ] || { stamp "synthesizing the unseen-phrasing held-out set ($N_GEN per category)";
  $PY "$HERE/synth.py" "$OUT/gen" --split gen -n "$N_GEN" --seed "$SEED" --jobs 2; }

if [ -n "$INIT" ]; then
  stamp "tokenizer: $INIT's (fine-tuning)"
  cp "$INIT/tokenizer.model" "$OUT/tokenizer.model"
else
  stamp "tokenizer"
  $PY "$HERE/tokenizer.py" "$OUT/tokenizer.model" --seed "$SEED" --word-strings "$WORD_STRINGS" --compose "$COMPOSE"
fi

stamp "training ($STEPS steps, at most $BUDGET_MIN min)"
RESUME=(); [ -f "$OUT/run/last.pt" ] && RESUME=(--resume "$OUT/run/last.pt")
$PY "$HERE/train.py" --data "$OUT/train" --tokenizer "$OUT/tokenizer.model" --out "$OUT/run" \
  --steps "$STEPS" --budget-min "$BUDGET_MIN" --batch-sec "$BATCH_SEC" --lr "$LR" --warmup "$WARMUP" \
  --ctc-weight "$CTC_WEIGHT" --align-weight "$ALIGN_WEIGHT" --align-start "$ALIGN_START" --sorted-epochs "$SORTED_EPOCHS" --specaug "$SPECAUG" --procs "$PROCS" \
  --seed "$SEED" --dims "$DIMS" --save-every 500 ${INIT:+--init "$INIT"} "${RESUME[@]}" 2>&1 | tee -a "$OUT/train.log"

stamp "export"
$PY "$HERE/export.py" "$OUT/run/last.pt" "$OUT/package" --dtype "$DTYPE"

stamp "evaluation (engine greedy and 4 beams; PyTorch parity on 8 clips)"
$PY "$HERE/evaluate.py" --model "$OUT/package" --data "$OUT/eval" --audioc "$AUDIOC" --beams 1,4 \
  --ckpt "$OUT/run/last.pt" --torch-n 8 --report "$OUT/eval_report.json" --max-wer 2
stamp "evaluation of the unseen phrasings (engine greedy and 4 beams)"
$PY "$HERE/evaluate.py" --model "$OUT/package" --data "$OUT/gen" --audioc "$AUDIOC" --beams 1,4 \
  --report "$OUT/eval_gen_report.json" --max-wer 5 --max-category-wer 10 --max-hallucination 1
stamp "done: package in $OUT/package, reports in $OUT/eval_report.json and $OUT/eval_gen_report.json"
