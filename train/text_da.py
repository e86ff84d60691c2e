#!/usr/bin/python3
"""Danish training text: numbers, dates, clock times and everyday sentences.

Conventions (the model is prompted with <|pnc|><|noitn|>):
- <|noitn|> means "no inverse text normalization": the target is what is *said*, so numbers,
  dates and times are written in words, never digits ("enogtyve", "den fjerde december").
  This also keeps audio -> text unambiguous ("halv tre" could be 2.30 or 14.30).
- <|pnc|> means normal orthography: the first letter is capitalized, names keep their capital,
  sentences end in ".", "?" or "!", commas where Danish puts them in the fixed sentences.
- Numbers (Retskrivningsordbogen style): tens+units are one word ("enogtyve",
  "femoghalvfems"); hundreds and thousands are separate words with "et"
  ("et hundrede", "et tusind ni hundrede og nioghalvfems"); "og" goes before the last part
  when it is below 100 and something bigger precedes it ("et tusind og fem",
  "to hundrede og tyve", but "et tusind et hundrede"). 1 alone is "en" (counting form).
  Speech often drops the leading "et" ("tusind kroner", "hundrede og tyve"); the training
  text does so sometimes (bare=True), and the target then drops it too.
- Years 1100-1999 are read in hundreds ("nitten hundrede og nioghalvfems"), others as cardinals
  ("to tusind og treogtyve").
- Dates: "mandag den fjerde december to tusind og treogtyve" (weekday from the real calendar).
- Clock: informal ("halv tre", "kvart over syv", "fem i halv ni", "klokken et"), informal with
  minutes ("ti minutter over fem", "fem minutter i halv otte", "et minut over tre") or digital
  ("klokken fjorten tredive", "klokken otte nul fem"); a part of the day may follow
  ("klokken syv om aftenen", "klokken halv ni i morgen").
- Very short utterances are whole sentences too: "Otte.", "Mandag.", "Ja tak.".
The espeak-ng input is the target text itself, so speech and label always agree.

Determinism: everything is drawn from random.Random(seed). Split: a sentence is held out iff
md5(sentence) falls into the held-out fraction (5 %), so a held-out sentence can never be
generated for training, whatever the seed or count. The "eval" split draws from the original
generators (BASE_GENERATORS) and is unchanged; training draws from TRAIN_GENERATORS, which
cover more ways of saying the same things. Training also never uses (never_trained()):
one-word sentences in the held-out fraction SHORT_HELDOUT_FRAC (there are only ~150 of them,
5 % would hold out too few to measure) and the REPORTED sentences. heldout_da.py builds the
second held-out set (unseen phrasings) from these held-out sentences only.
"""
import argparse
import datetime
import functools
import hashlib
import json
import os
import random
import re

ONES = ["nul", "en", "to", "tre", "fire", "fem", "seks", "syv", "otte", "ni", "ti", "elleve",
        "tolv", "tretten", "fjorten", "femten", "seksten", "sytten", "atten", "nitten"]
TENS = {2: "tyve", 3: "tredive", 4: "fyrre", 5: "halvtreds", 6: "tres", 7: "halvfjerds",
        8: "firs", 9: "halvfems"}
ORD = ["", "første", "anden", "tredje", "fjerde", "femte", "sjette", "syvende", "ottende",
       "niende", "tiende", "ellevte", "tolvte", "trettende", "fjortende", "femtende", "sekstende",
       "syttende", "attende", "nittende", "tyvende"]
ORD_TENS = {2: "tyvende", 3: "tredivte"}
MONTHS = ["januar", "februar", "marts", "april", "maj", "juni", "juli", "august", "september",
          "oktober", "november", "december"]
WEEKDAYS = ["mandag", "tirsdag", "onsdag", "torsdag", "fredag", "lørdag", "søndag"]


def below100(n):
    """0..99 as one word: 21 -> enogtyve (units first, joined with 'og')."""
    if n < 20:
        return ONES[n]
    t, u = divmod(n, 10)
    return TENS[t] if u == 0 else ONES[u] + "og" + TENS[t]


def number_words(n, one="en", bare=False):
    """0..9999 in words. `one` is the form of a bare 1 ("en" counting, "et" e.g. clock);
    bare=True drops a leading "et" before tusind / hundrede ("tusind og fem")."""
    assert 0 <= n <= 9999, n
    if n == 1:
        return one
    if n < 100:
        return below100(n)
    th, rest = divmod(n, 1000)
    h, r = divmod(rest, 100)
    parts = []
    if th:
        parts.append(("et" if th == 1 else below100(th)) + " tusind")
    if h:
        parts.append(("et" if h == 1 else ONES[h]) + " hundrede")
    if r:
        parts.append("og " + below100(r))  # "og" before the part below 100
    out = " ".join(parts)
    return out[3:] if bare and out.startswith("et ") else out


def ordinal_words(n):
    """1..31: første .. enogtredivte."""
    if n <= 20:
        return ORD[n]
    t, u = divmod(n, 10)
    return ORD_TENS[t] if u == 0 else ONES[u] + "og" + ORD_TENS[t]


def year_words(y):
    if 1100 <= y <= 1999:
        c, r = divmod(y, 100)
        return ONES[c] + " hundrede" + (" og " + below100(r) if r else "")
    return number_words(y)


def clock_informal(h, m):
    """h 1..12, m multiple of 5 -> 'kvart over syv', 'fem i halv ni', ... ('et' for 1)."""
    hw = lambda x: number_words((x - 1) % 12 + 1, one="et")  # noqa: E731
    nxt = h + 1
    table = {0: hw(h), 5: "fem over " + hw(h), 10: "ti over " + hw(h), 15: "kvart over " + hw(h),
             20: "tyve over " + hw(h), 25: "fem i halv " + hw(nxt), 30: "halv " + hw(nxt),
             35: "fem over halv " + hw(nxt), 40: "tyve i " + hw(nxt), 45: "kvart i " + hw(nxt),
             50: "ti i " + hw(nxt), 55: "fem i " + hw(nxt)}
    return table[m]


def clock_minutes(h, m):
    """h 1..12, m 1..59 other than 15/30/45 -> 'ti minutter over fem', 'fem minutter i halv
    otte', 'et minut over tre', 'tolv minutter i ni' (the hour is the next one from :21 on)."""
    assert 1 <= m <= 59 and m not in (15, 30, 45), m
    hw = lambda x: number_words((x - 1) % 12 + 1, one="et")  # noqa: E731
    mins = lambda x: number_words(x, one="et") + (" minut" if x == 1 else " minutter")  # noqa: E731
    if m <= 20:
        return f"{mins(m)} over {hw(h)}"
    if m < 30:
        return f"{mins(30 - m)} i halv {hw(h + 1)}"
    if m < 40:
        return f"{mins(m - 30)} over halv {hw(h + 1)}"
    return f"{mins(60 - m)} i {hw(h + 1)}"


def clock_digital(h, m):
    """0..23, 0..59 -> 'fjorten tredive', 'otte nul fem', 'tolv' (m == 0)."""
    hw = number_words(h, one="et")
    if m == 0:
        return hw
    return hw + " " + ("nul " + ONES[m] if m < 10 else below100(m))


def cap(s):
    return s[0].upper() + s[1:]


class Vocab:
    def __init__(self, path):
        self.cat = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                k, v = line.split(":", 1)
                self.cat[k.strip()] = [w.strip() for w in v.split("|") if w.strip()]

    def __getitem__(self, k):
        return self.cat[k]


# ---- sentence generators: rng -> one target sentence ----------------------------------------

def gen_number(r, v):
    n = r.choice([r.randrange(0, 100), r.randrange(100, 1000), r.randrange(1000, 10000)])
    w = number_words(n)
    return r.choice([cap(w) + ".", "Tallet er " + w + ".", "Det koster " + w + " kroner.",
                     "Der er " + w + " personer.", cap(r.choice(v["pron"])) + " har " + w + " kroner.",
                     "Nummer " + w + ".", "Vi kører " + w + " kilometer.", "Svaret er " + w + "."])


def gen_date(r, v):
    d = datetime.date(1900, 1, 1) + datetime.timedelta(days=r.randrange(0, 200 * 365))
    wd, day, mon, yr = WEEKDAYS[d.weekday()], ordinal_words(d.day), MONTHS[d.month - 1], year_words(d.year)
    full = f"{wd} den {day} {mon} {yr}"
    return r.choice([cap(full) + ".", "I dag er det " + full + ".", f"Den {day} {mon}.",
                     f"Mødet er {wd} den {day} {mon}.", f"{cap(r.choice(v['name']))} er født den {day} {mon} {yr}.",
                     f"I {yr}.", f"Det var i {mon} {yr}.", f"{cap(wd)} den {day}.", f"Er det {wd} i dag?"])


def gen_clock(r, v):
    if r.random() < 0.6:
        t = clock_informal(r.randrange(1, 13), 5 * r.randrange(0, 12))
    else:
        t = clock_digital(r.randrange(0, 24), r.randrange(0, 60))
    return r.choice([f"Klokken er {t}.", f"Vi mødes klokken {t}.", f"Toget kører klokken {t}.",
                     f"{cap(r.choice(v['name']))} kommer klokken {t}.", f"Er klokken {t}?",
                     f"Klokken {t}.", f"Butikken lukker klokken {t}.", f"{cap(r.choice(v['when']))} klokken {t}."])


def gen_everyday(r, v):
    name, pron, obj = r.choice(v["name"]), r.choice(v["pron"]), r.choice(v["obj"])
    place, when, adj = r.choice(v["place"]), r.choice(v["when"]), r.choice(v["adj"])
    subj = r.choice([name, pron])
    k = r.randrange(10)
    if k == 0:
        return r.choice(v["fixed"])
    if k == 1:
        return cap(f"{subj} {r.choice(v['vpast'])} {obj} {when}.")
    if k == 2:
        return cap(f"{subj} {r.choice(v['vpres'])} {obj} {when}.")
    if k == 3:
        return cap(f"{subj} {r.choice(v['vmove'])} til {place} {when}.")
    if k == 4:
        return cap(f"{when} er der {r.choice(v['weather'])} i {place}.")
    if k == 5:
        return f"Hvor er {obj}?" if not obj.startswith(("en ", "et ")) else f"Har du {obj}?"
    if k == 6:
        return cap(f"{subj} er {adj} {when}.")
    if k == 7:
        return f"{name} og {r.choice(v['name'])} bor i {place}."
    if k == 8:
        return cap(f"{when} {r.choice(v['vpres'])} {pron} {obj}.")  # Danish V2 word order
    return f"Kan du {r.choice(['se', 'finde', 'tage', 'købe'])} {obj}, {name}?"


BASE_GENERATORS = [(gen_number, 0.27), (gen_date, 0.2), (gen_clock, 0.2), (gen_everyday, 0.33)]


# ---- broader training text: the same domain said in more ways -------------------------------
# heldout_da.py has its own carrier phrases for the same phenomena; none of these is used there.

def spoken_time(r):
    """A clock time as said after "klokken": informal, informal with minutes, or digital."""
    k = r.random()
    if k < 0.45:
        return clock_informal(r.randrange(1, 13), 5 * r.randrange(0, 12))
    if k < 0.75:
        return clock_minutes(r.randrange(1, 13), r.choice([m for m in range(1, 60) if m % 15]))
    return clock_digital(r.randrange(0, 24), r.randrange(0, 60))


def spoken_number(r, low=0):
    n = r.choice([r.randrange(max(low, 0), 100), r.randrange(max(low, 0), 100), r.randrange(100, 1000),
                  r.randrange(1000, 10000)])
    return number_words(n, bare=r.random() < 0.3)


def gen_short(r, v):
    """One or two words: a number, weekday, month, "ja", a greeting, "klokken tre", "den femte"."""
    k = r.random()
    if k < 0.40:
        w = below100(r.randrange(0, 100)) if r.random() < 0.8 else number_words(
            r.choice([100, 1000, r.randrange(2, 10) * 100, r.randrange(2, 10) * 1000]), bare=r.random() < 0.5)
        return cap(w) + "."
    if k < 0.50:
        return cap(r.choice(WEEKDAYS)) + r.choice([".", ".", "?"])
    if k < 0.58:
        return cap(r.choice(MONTHS)) + "."
    if k < 0.78:
        return r.choice(v["short"])
    if k < 0.84:
        return "Klokken " + number_words(r.randrange(1, 13), one="et") + "."
    if k < 0.90:
        return "Den " + ordinal_words(r.randrange(1, 32)) + "."
    if k < 0.95:
        return cap(r.choice(v["daypart"])) + "."
    return cap(r.choice(v["name"])) + r.choice([".", "?", "!"])


def gen_time_phrase(r, v):
    """Times with and without "minutter", a weekday before and a part of the day after."""
    t = spoken_time(r)
    if r.random() < 0.2:
        return f"Klokken er {t}" + (" " + r.choice(v["daypart"]) if r.random() < 0.3 else "") + "."
    x = "klokken " + t
    wd = r.choice(WEEKDAYS)
    if r.random() < 0.4:
        x = r.choice(["på " + wd, "næste " + wd, "hver " + wd, "på " + wd]) + " " + x
    if r.random() < 0.45:
        x += " " + r.choice(v["daypart"])
    return r.choice([f"Vi ses {x}.", f"Jeg ringer {x}.", f"{cap(r.choice(v['event']))} starter {x}.",
                     f"{cap(r.choice(v['event']))} begynder {x}.", f"Vi mødes {x}.", f"Skal vi sige {x}?",
                     f"{r.choice(v['name'])} lander {x}.", f"Jeg henter dig {x}.", cap(x) + "."])


def date_phrase(r):
    """A date with or without weekday / year; with both, the weekday is the real one."""
    d = datetime.date(1900, 1, 1) + datetime.timedelta(days=r.randrange(0, 200 * 365))
    wd, day, mon, yr = WEEKDAYS[d.weekday()], ordinal_words(d.day), MONTHS[d.month - 1], year_words(d.year)
    return r.choice([f"den {day} {mon}", f"den {day} {mon}", f"den {day}", f"{wd} den {day}",
                     f"{r.choice(WEEKDAYS)} den {day} {mon}", f"den {day} {mon} {yr}",
                     f"{wd} den {day} {mon} {yr}", f"{day} {mon}"])


def gen_date_phrase(r, v):
    d = date_phrase(r)
    return r.choice([cap(d) + ".", f"Vi flytter {d}.", f"{cap(r.choice(v['event']))} er {d}.",
                     f"{r.choice(v['name'])} rejser {d}.", f"Det sker {d}.", f"Jeg har fri {d}.",
                     f"{cap(r.choice(v['event']))} er {d} klokken {spoken_time(r)}.",
                     f"{cap(d)} klokken {spoken_time(r)}."])


def gen_count(r, v):
    """Numbers inside sentences, with a plural noun."""
    n, noun = spoken_number(r, low=2), r.choice(v["count"])
    subj = r.choice([r.choice(v["name"]), r.choice(v["pron"])])
    return r.choice([f"Der er {n} {noun} i {r.choice(v['place'])}.",
                     cap(f"{subj} {r.choice(v['vpast'])} {n} {noun} {r.choice(v['when'])}."),
                     f"Vi skal bruge {n} {noun}.", f"{cap(n)} {noun}, tak.", f"Hvor er de {n} {noun}?",
                     f"Det tager {n} {r.choice(['minutter', 'timer', 'dage', 'uger'])}."])


def gen_combined(r, v):
    """Sentences that combine categories: sentence + time, sentence + date, date + time."""
    subj, place = r.choice([r.choice(v["name"]), r.choice(v["pron"])]), r.choice(v["place"])
    t, d = spoken_time(r), date_phrase(r)
    return r.choice([cap(f"{subj} {r.choice(v['vmove'])} til {place} klokken {t}") + ".",
                     cap(f"{subj} {r.choice(v['vpast'])} {r.choice(v['obj'])} {d}") + ".",
                     cap(f"{d} {r.choice(v['vmove'])} {r.choice(v['pron'])} til {place}") + ".",
                     cap(f"{subj} {r.choice(v['vpres'])} {r.choice(v['obj'])} klokken {t} "
                         f"{r.choice(v['daypart'])}") + "."])


@functools.lru_cache(maxsize=None)
def domain_words(v):
    """Every word of the domain once: numbers, ordinals, clock words, days, months, names, places,
    pronouns, weather and the short answers (unpunctuated)."""
    words = ONES + list(TENS.values()) + [below100(n) for n in range(21, 100) if n % 10]
    words += ["hundrede", "tusind", "og", "den", "klokken", "halv", "kvart", "over", "i", "minut", "minutter"]
    words += [ordinal_words(n) for n in range(1, 32)] + WEEKDAYS + MONTHS
    words += v["name"] + [p for p in v["place"] if " " not in p] + v["pron"] + v["weather"]
    words += [s.rstrip(".?!").lower() for s in v["short"] if len(s.split()) == 1]
    return sorted(set(words))


@functools.lru_cache(maxsize=None)
def training_words(v):
    """Every word the training templates write, once: domain_words plus the carriers, verbs,
    nouns and function words of the sentences (lower case but for names and places).
    Collected by drawing from every generator, so it follows the templates as they change."""
    r = random.Random("training-words")
    proper = set(v["name"]) | {p for p in v["place"] if p[0].isupper()}
    words = set(domain_words(v))
    for g, _ in TRAIN_GENERATORS:
        for _ in range(3000):
            for w in re.sub(r"[.,?!]", " ", g(r, v)).split():
                words.add(w if w in proper else w.lower())
    return sorted(words)


def gen_word_string(r, v):
    """One to six words of the training text in no template's order ("Tolv hjem åbner Karen."):
    the decoder cannot lean on a carrier phrase and has to follow the audio, and every word is
    heard in new neighbours, first, last and on its own. The first word is a domain word half of
    the time, so that numbers, days and months are also written capitalized at the start."""
    n = r.choices([1, 2, 3, 4, 5, 6], [20, 25, 20, 15, 12, 8])[0]
    first = r.choice(domain_words(v) if r.random() < 0.5 else training_words(v))
    return cap(" ".join([first] + [r.choice(training_words(v)) for _ in range(n - 1)])) + "."


def gen_compose(r, v):
    """A sentence put together from the domain's parts instead of a fixed carrier: a subject (a
    name, pronoun, event or place), a verb, maybe an object or a count, a direction, and one or
    two adverbials (a time, a date, a day, "i morgen"), as a statement, with the first adverbial
    first (Danish V2 order) or as a question."""
    subj = r.choice([r.choice(v["name"]), r.choice(v["pron"]), r.choice(v["event"]),
                     r.choice([p for p in v["place"] if p.islower()])])
    k = r.random()
    if k < 0.35:
        verb = r.choice(v["vpres"] + v["vpast"] + ["har"])
        rest = [r.choice(v["obj"]) if r.random() < 0.6 else f"{spoken_number(r, low=2)} {r.choice(v['count'])}"]
    elif k < 0.7:
        verb = r.choice(v["vmove"])
        rest = [r.choice([f"til {r.choice(v['place'])}", "hjem", f"fra {r.choice(v['place'])}", ""])]
    else:
        verb, rest = r.choice(["starter", "begynder", "lukker", "åbner", "lander", "er", "var", "kommer"]), []
    advs = [lambda: f"klokken {spoken_time(r)}" + (f" {r.choice(v['daypart'])}" if r.random() < 0.3 else ""),
            lambda: date_phrase(r), lambda: r.choice(v["when"]), lambda: f"på {r.choice(WEEKDAYS)}",
            lambda: f"i {r.choice(v['place'])}"]
    adv = [g() for g in r.sample(advs, r.choice([1, 1, 2]))]
    rest = [x for x in rest if x]
    form = r.random()
    if form < 0.5:
        words, end = [subj, verb] + rest + adv, "."
    elif form < 0.85:
        words, end = [adv[0], verb, subj] + rest + adv[1:], "."
    else:
        words, end = [verb, subj] + rest + adv, "?"
    return cap(" ".join(words)) + end


# one- and two-word utterances are ~22 % of the training text (base generators add a few more);
# sentences(word_strings=W) adds gen_word_string with weight W (0.25: a fifth of the text)
TRAIN_GENERATORS = [(gen_number, 0.12), (gen_date, 0.09), (gen_clock, 0.09), (gen_everyday, 0.16),
                    (gen_short, 0.22), (gen_time_phrase, 0.12), (gen_date_phrase, 0.08), (gen_count, 0.07),
                    (gen_combined, 0.05)]

HELDOUT_FRAC = 0.05
SHORT_HELDOUT_FRAC = 0.25
# Utterances users reported misrecognized by the first shipped model: (text, voice, words/min).
# heldout_da.py evaluates them as they were said; training never uses these sentences.
REPORTED = [("Halvtreds.", "f3", 170), ("Otte.", "", 175), ("Tusind.", "m5", 155),
            ("Klokken er ti minutter over fem.", "m2", 150), ("Søndag klokken tolv.", "klatt", 160),
            ("Vi mødes klokken halv syv i morgen.", "", 150)]


def is_heldout(text, frac):
    h = int(hashlib.md5(text.encode("utf-8")).hexdigest()[:8], 16) / 0x100000000
    return h < frac


def never_trained(text):
    """True for every sentence of either held-out set (the rule does not depend on any seed)."""
    return (is_heldout(text, HELDOUT_FRAC) or (len(text.split()) == 1 and is_heldout(text, SHORT_HELDOUT_FRAC))
            or text in REPORTED_TEXTS)


REPORTED_TEXTS = {t for t, _, _ in REPORTED}


def sentences(split, n, seed, vocab, heldout_frac=HELDOUT_FRAC, unique=False, word_strings=0.0, compose=0.0):
    """n sentences of the split ('train' or 'eval'), deterministic given the seed.

    unique=True: no repeats (for eval sets; train may repeat common sentences).
    word_strings, compose: the weights of gen_word_string and gen_compose among the training
    generators (0: none). Training never uses a held-out sentence, nor a sentence with one of
    the unseen phrasings' carriers (heldout_da.carrier_patterns)."""
    import heldout_da   # it imports this module
    carriers = heldout_da.carrier_patterns(vocab)
    r = random.Random(f"{seed}-{split}")
    train_gens = TRAIN_GENERATORS + [(g, w) for g, w in ((gen_word_string, word_strings), (gen_compose, compose)) if w > 0]
    gens, weights = zip(*(train_gens if split == "train" else BASE_GENERATORS))
    out, seen = [], set()
    while len(out) < n:
        g = r.choices(gens, weights)[0]
        t = g(r, vocab)
        if ((never_trained(t) or heldout_da.uses_carrier(t, carriers)) if split == "train"
                else not is_heldout(t, heldout_frac)):
            continue
        if unique and t in seen:
            continue
        seen.add(t)
        out.append(t)
    return out


def selftest():
    cases = {0: "nul", 1: "en", 7: "syv", 21: "enogtyve", 30: "tredive", 95: "femoghalvfems",
             100: "et hundrede", 101: "et hundrede og en", 120: "et hundrede og tyve",
             999: "ni hundrede og nioghalvfems", 1000: "et tusind", 1005: "et tusind og fem",
             1100: "et tusind et hundrede", 1999: "et tusind ni hundrede og nioghalvfems",
             2023: "to tusind og treogtyve", 9999: "ni tusind ni hundrede og nioghalvfems",
             4560: "fire tusind fem hundrede og tres", 7200: "syv tusind to hundrede"}
    for n, w in cases.items():
        assert number_words(n) == w, (n, number_words(n), w)
    assert ordinal_words(4) == "fjerde" and ordinal_words(31) == "enogtredivte"
    assert ordinal_words(22) == "toogtyvende" and ordinal_words(30) == "tredivte"
    assert year_words(1999) == "nitten hundrede og nioghalvfems" and year_words(1900) == "nitten hundrede"
    assert clock_informal(2, 30) == "halv tre" and clock_informal(7, 15) == "kvart over syv"
    assert clock_informal(12, 30) == "halv et" and clock_informal(8, 25) == "fem i halv ni"
    assert clock_digital(14, 30) == "fjorten tredive" and clock_digital(8, 5) == "otte nul fem"
    assert clock_minutes(5, 10) == "ti minutter over fem" and clock_minutes(7, 25) == "fem minutter i halv otte"
    assert clock_minutes(3, 1) == "et minut over tre" and clock_minutes(8, 48) == "tolv minutter i ni"
    assert clock_minutes(6, 39) == "ni minutter over halv syv" and clock_minutes(12, 50) == "ti minutter i et"
    assert number_words(1000, bare=True) == "tusind" and number_words(120, bare=True) == "hundrede og tyve"
    assert number_words(2100, bare=True) == "to tusind et hundrede" and number_words(1, bare=True) == "en"
    v = Vocab(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary_da.txt"))
    # the original held-out set must not change (the shipped model's figures refer to it)
    old_eval = "\n".join(sentences("eval", 300, 1234, v, unique=True)).encode("utf-8")
    assert hashlib.md5(old_eval).hexdigest() == "e6083b092788f43dee70f6457cbae138", "eval split changed"
    for ws, co in ((0.0, 0.0), (0.25, 0.25)):
        train = sentences("train", 20000, 1234, v, word_strings=ws, compose=co)
        assert not any(never_trained(t) for t in train) and not REPORTED_TEXTS & set(train)
        short = sum(len(t.split()) <= 2 for t in train) / len(train)
        assert 0.18 <= short <= 0.27, short
        for t in train:
            assert t[0].isupper() and t[-1] in ".?!" and not any(c.isdigit() for c in t), t
        print(f"text_da selftest ok (word strings {ws}, composed {co}: {100 * short:.1f} % of training utterances have one or "
              "two words)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=["train", "eval"], default="train")
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--vocab", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary_da.txt"))
    ap.add_argument("--word-strings", type=float, default=0.0, help="weight of gen_word_string in training text")
    ap.add_argument("--compose", type=float, default=0.0, help="weight of gen_compose in training text")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return
    for t in sentences(a.split, a.n, a.seed, Vocab(a.vocab), unique=a.split == "eval", word_strings=a.word_strings,
                           compose=a.compose):
        print(json.dumps(t, ensure_ascii=False))


if __name__ == "__main__":
    main()
