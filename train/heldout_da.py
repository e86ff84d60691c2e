#!/usr/bin/python3
"""The generalization held-out set: phrasings training never uses, by category.

usage: heldout_da.py [-n PER_CATEGORY] [--seed S] [--selftest]

The original held-out set (text_da.sentences(split="eval")) draws from the training templates;
this one asks whether the model generalizes beyond them. Categories:
- number_word: a single number word ("Halvfjerds."), with long silence around it in synth.py;
- short: one word under 1 s ("To.", "Maj.", "Nej.");
- date_short: dates without year or weekday inside sentences ("Butikken åbner den tredje maj.");
- time_minutter: times with "minutter" ("Toget går ti minutter over fem.");
- time_day_part: a time with "i morgen", "om aftenen" or "om morgenen";
- weekday_time: weekday + time ("Søndag klokken tolv.");
- number_sentence: numbers inside sentences ("Jeg har tre børn.");
- reported: text_da.REPORTED, with the voices and speeds users used (training voices).
Each template here is written independently of text_da.TRAIN_GENERATORS (other carrier
phrases, the same phenomena, words the training text has). Every sentence is one that training
never uses (text_da.never_trained: the md5 rule, or a reported sentence). Deterministic given
the seed; sentences may repeat (synth.py gives every clip its own held-out voice and speed).
"""
import argparse
import datetime
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import text_da as T  # noqa: E402

VOCAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary_da.txt")
FIRST_DAY_PARTS = ["i morgen", "om aftenen", "om morgenen"]


def one_word_candidates(v):
    """Every one-word sentence of the domain: numbers below 100, weekdays, months, "Ja." ..."""
    words = [T.cap(T.below100(n)) + "." for n in range(100)]
    words += [T.cap(w) + "." for w in T.WEEKDAYS + T.MONTHS]
    return words + [s for s in v["short"] if len(s.split()) == 1]


def time_no_minutes(r):
    if r.random() < 0.7:
        return T.clock_informal(r.randrange(1, 13), 5 * r.randrange(0, 12))
    return T.clock_digital(r.randrange(0, 24), 5 * r.randrange(0, 12))


def day_month(r):
    d = datetime.date(2001, 1, 1) + datetime.timedelta(days=r.randrange(365))
    return T.ordinal_words(d.day), T.MONTHS[d.month - 1]


def gen_date_short(r, v):
    day, mon = day_month(r)
    return r.choice([f"{r.choice(v['name'])} kommer hjem den {day} {mon}.", f"Er det den {day} {mon} i dag?",
                     f"Butikken åbner den {day} {mon}.", f"Den {day} {mon} rejser vi til {r.choice(v['place'])}.",
                     f"Hvad med den {day}?"])


def gen_time_minutter(r, v):
    mm = T.clock_minutes(r.randrange(1, 13), r.choice([m for m in range(1, 60) if m % 15]))
    return r.choice([f"Den er {mm}.", f"Toget går {mm}.", f"Nu er klokken {mm}.", f"Klokken var {mm}."])


def gen_time_day_part(r, v):
    t, dp = time_no_minutes(r), r.choice(FIRST_DAY_PARTS)
    return r.choice([f"{T.cap(r.choice(v['event']))} er klokken {t} {dp}.", f"Vi spiser klokken {t} {dp}.",
                     f"{r.choice(v['name'])} går hjem klokken {t} {dp}.", f"Ring til mig klokken {t} {dp}."])


def gen_weekday_time(r, v):
    wd, t = r.choice(T.WEEKDAYS), time_no_minutes(r)
    return r.choice([f"{T.cap(wd)} klokken {t}.", f"{r.choice(v['name'])} kommer {wd} klokken {t}.",
                     f"Er det {wd} klokken {t}?", f"Hvad med {wd} klokken {t}?"])


def gen_number_sentence(r, v):
    n = T.number_words(r.choice([r.randrange(2, 100), r.randrange(2, 20), r.randrange(100, 1000)]))
    noun = r.choice([c for c in v["count"] if c != "kroner"])
    subj = r.choice([r.choice(v["name"]), r.choice(v["pron"])])
    return r.choice([T.cap(f"{subj} har {n} {noun}."), f"Har du {n} {noun}?",
                     f"{r.choice(v['name'])} fandt {n} {noun} i {r.choice(v['place'])}.",
                     f"Kan du købe {n} {noun}?"])


def gen_number_word(r, v):
    return r.choice(one_word_candidates(v)[:100])


def gen_short(r, v):
    """Half numbers of at most 7 letters, half other words (weekdays, months, "Nej.")."""
    words = one_word_candidates(v)
    return r.choice([w for w in words[:100] if len(w) <= 8] if r.random() < 0.5 else words[100:])


def carrier_patterns(v):
    """The carriers of the templates above, as patterns: a training sentence matching one would
    be a held-out phrasing with other slot words, so text_da.sentences never trains on one."""
    wd, nouns = "|".join(T.WEEKDAYS), "|".join(c for c in v["count"] if c != "kroner")
    places = "|".join(v["place"])
    pats = [r"\w+ kommer hjem den ", r"Er det den [\w ]+ i dag\?$", r"Butikken åbner den ",
            r"Den \w+ \w+ rejser vi til ", r"Hvad med ", r"Den er ", r"Toget går ", r"Nu er klokken ",
            r"Klokken var ", r"\w+ er klokken .* (i morgen|om aftenen|om morgenen)\.$", r"Vi spiser klokken ",
            r"\w+ går hjem klokken ", r"Ring til mig klokken ", rf"({wd}) klokken ", rf"\w+ kommer ({wd}) klokken ",
            rf"Er det ({wd}) klokken ", rf"\w+ har [\w ]+ ({nouns})\.$", rf"Har du [\w ]+ ({nouns})\?$",
            rf"\w+ fandt [\w ]+ ({nouns}) i ({places})\.$", rf"Kan du købe [\w ]+ ({nouns})\?$"]
    return [re.compile(x, re.IGNORECASE) for x in pats]


def uses_carrier(text, patterns):
    return any(p.match(text) for p in patterns)


GENERATED = [("number_word", gen_number_word), ("short", gen_short),
             ("date_short", gen_date_short), ("time_minutter", gen_time_minutter),
             ("time_day_part", gen_time_day_part), ("weekday_time", gen_weekday_time),
             ("number_sentence", gen_number_sentence)]
CATEGORIES = [c for c, _ in GENERATED] + ["reported"]


def items(per_category, seed, vocab):
    """[(category, text, fixed voice and speed or None)]: per_category clips of each generated
    category, then the reported utterances."""
    out = []
    for cat, gen in GENERATED:
        r = random.Random(f"{seed}-heldout-{cat}")
        k = 0
        while k < per_category:
            t = gen(r, vocab)
            if T.never_trained(t) and t not in T.REPORTED_TEXTS:
                out.append((cat, t, None))
                k += 1
    return out + [("reported", t, {"voice": voice, "speed": speed}) for t, voice, speed in T.REPORTED]


def selftest(seed):
    v = T.Vocab(VOCAB)
    its = items(40, seed, v)
    assert items(40, seed, v) == its, "not deterministic"
    train = T.sentences("train", 60000, seed, v) + T.sentences("train", 60000, seed, v, word_strings=0.25, compose=0.25)
    train_set = set(train)
    clash = [t for _, t, _ in its if t in train_set]
    assert not clash, clash
    # the carriers are new, the words are not: every held-out word occurs in the training text
    known = {w for s in train for w in s.lower().replace(",", " ").replace(".", " ").replace("?", " ").split()}
    unknown = sorted({w for _, t, _ in its for w in t.lower().strip(".?!").replace(",", "").split()} - known)
    assert not unknown, unknown
    for cat in CATEGORIES:
        assert any(c == cat for c, _, _ in its), cat
    pats = carrier_patterns(v)
    free = [t for c, t, _ in its if c not in ("number_word", "short", "reported") and not uses_carrier(t, pats)]
    assert not free, free
    assert not [t for t in train if uses_carrier(t, pats)]
    one_word = [t for c, t, _ in its if c in ("number_word", "short")]
    assert all(len(t.split()) == 1 for t in one_word), one_word
    print(f"heldout_da selftest ok: {len(its)} items, {len({t for _, t, _ in its})} distinct sentences, "
          f"none among {len(train_set)} distinct training sentences")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=40, help="clips per generated category")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        selftest(a.seed)
        return
    for cat, t, fixed in items(a.n, a.seed, T.Vocab(VOCAB)):
        print(json.dumps({"category": cat, "text": t, **(fixed or {})}, ensure_ascii=False))


if __name__ == "__main__":
    main()
