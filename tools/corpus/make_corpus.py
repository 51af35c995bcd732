#!/usr/bin/env python3
"""Writes data/corpus.txt, the small English corpus minigraph's training tests and demos use.

How it is made: every sentence comes from templates written for this project (below), with
slots filled from word groups (pets, weekdays, instruments, foods, colours, cities, family,
activities) and from invented names built out of syllables. Python's random.Random(seed) picks
the templates and the fillers, so the same seed and size give the same bytes:

    python3 tools/corpus/make_corpus.py --seed 14 --bytes 2000000 --out data/corpus.txt

Why it looks like this: the first model trained on it (ANDREA's input layer and untied head,
logits of token t+1 = (tok_emb[id_t] + pos_emb[t]) @ W) predicts the next token from the current
one alone, so two words get similar embeddings exactly when the words that FOLLOW them are
distributed alike. Every template fills a group's slot uniformly from the whole group, so all
members of a group share one distribution of next words, and each group has followers of its own
(pets: sleeps, eats, naps ...; weekdays: morning, night, at ...; instruments: lessons, solo,
player ...). `--check` prints the cosine of the next-word count vectors of a few word pairs.
The invented names (thousands of distinct words) let SentencePiece reach vocabularies of a few
thousand pieces.

Licence: the templates, word lists and this script are minigraph's own work, under the same
licence as the rest of the project; the generated corpus is too. Python standard library only.
"""

import argparse
import collections
import math
import os
import random
import re
import sys

PETS = ["cat", "dog", "rabbit", "hamster", "puppy", "kitten", "parrot", "pony", "tortoise",
        "ferret", "goldfish", "budgie"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
INSTRUMENTS = ["piano", "violin", "guitar", "flute", "cello", "trumpet", "clarinet", "drum",
               "saxophone", "harp", "banjo", "trombone"]
FOODS = ["bread", "cheese", "soup", "rice", "pasta", "salad", "cake", "pizza", "stew",
         "porridge", "pie", "curry"]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white", "brown",
           "grey", "pink"]
CITIES = ["London", "Paris", "Berlin", "Madrid", "Rome", "Vienna", "Lisbon", "Oslo", "Dublin",
          "Prague", "Tokyo", "Cairo", "Lima", "Toronto"]
FAMILY = ["mother", "father", "sister", "brother", "aunt", "uncle", "grandmother",
          "grandfather", "cousin", "son", "daughter", "nephew", "niece"]
ACTIVITIES = ["walk", "read", "cook", "swim", "sing", "write", "paint", "dance", "travel",
              "study", "garden", "knit"]

POSS = ["the", "my", "our", "her", "his", "their", "your", "a"]
PET_ACTS = ["sleeps", "eats", "naps", "plays", "hides", "waits", "jumps", "rests", "sits"]
PET_PLACES = ["on the sofa", "near the window", "under the table", "by the door",
              "all afternoon", "after lunch", "beside the fire", "on the rug"]
DAYPARTS = ["morning", "afternoon", "evening", "night"]
INST_NOUNS = ["lessons", "solo", "player", "teacher", "case", "music", "concerto", "strings"]
FOOD_TAIL = ["tastes", "smells", "looks", "seems"]
COLOUR_NOUNS = ["car", "shirt", "door", "coat", "paint", "scarf", "bicycle", "umbrella"]
CITY_TAIL = ["airport", "station", "museum", "harbour"]
FAMILY_VERBS = ["called", "visited", "phoned", "hugged", "texted", "thanked"]
FAMILY_SAYS = ["says", "thinks", "believes", "told", "remembers"]
ACT_TAIL = ["together", "outside", "slowly", "quietly", "daily"]
ADJ_PET = ["hungry", "sleepy", "happy", "curious", "clever", "gentle"]
ADJ_FOOD = ["delicious", "salty", "sweet", "warm", "fresh", "spicy"]
OCLOCK = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]

ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr",
          "gr", "kl", "st", "tr", "sh", "ch", "th", "h", "j", "w"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "ie", "oa"]
CODAS = ["", "", "", "n", "r", "l", "s", "m", "th", "nd", "rk", "ck"]


def invented_names(rng, count, syllables):
    """`count` distinct capitalised words of 2 to `syllables` syllables, in a fixed order."""
    names, seen = [], set()
    while len(names) < count:
        word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                       for _ in range(rng.randint(2, syllables)))
        word = word.capitalize()
        if word not in seen and len(word) <= 12:
            seen.add(word)
            names.append(word)
    return names


def make_sentence(rng, people, places):
    c = rng.choice
    p, d, i, f = c(PETS), c(DAYS), c(INSTRUMENTS), c(FOODS)
    col, city, fam, act = c(COLOURS), c(CITIES), c(FAMILY), c(ACTIVITIES)
    who, where = c(people), c(places)
    family_ = [
        # pets: followed by what pets do
        f"{c(POSS).capitalize()} {p} {c(PET_ACTS)} {c(PET_PLACES)}.",
        f"I think {c(POSS)} {p} {c(PET_ACTS)} {c(PET_PLACES)} every day.",
        f"When it rains {c(POSS)} {p} {c(PET_ACTS)} {c(PET_PLACES)}.",
        f"{who} says the {p} {c(PET_ACTS)} {c(PET_PLACES)} and the {c(PETS)} "
        f"{c(PET_ACTS)} too.",
        f"{c(POSS).capitalize()} {p} {c(PET_ACTS)} when it is {c(ADJ_PET)}.",
        # weekdays: followed by parts of the day, at, night
        f"The meeting is on {d} {c(DAYPARTS)}.",
        f"See you on {d} {c(DAYPARTS)} at {c(OCLOCK)}.",
        f"On {d} {c(DAYPARTS)} {who} went to the market.",
        f"We will call you {d} {c(DAYPARTS)} or {c(DAYS)} {c(DAYPARTS)}.",
        f"The shop opens on {d} at {c(OCLOCK)} o'clock.",
        # instruments: followed by lessons, solo, player ...
        f"She takes {i} {c(INST_NOUNS)} with {who}.",
        f"He bought a new {i} {c(INST_NOUNS)} for the band.",
        f"We loved the {i} {c(INST_NOUNS)} at the concert.",
        f"{who} is looking for a {i} {c(INST_NOUNS)} in {where}.",
        # foods: followed by tastes, smells, looks, seems
        f"This {f} {c(FOOD_TAIL)} {c(ADJ_FOOD)} today.",
        f"{who} says the {f} {c(FOOD_TAIL)} {c(ADJ_FOOD)} at {c(CITIES)} station.",
        f"The {f} {c(FOOD_TAIL)} {c(ADJ_FOOD)} and the {c(FOODS)} {c(FOOD_TAIL)} "
        f"{c(ADJ_FOOD)}.",
        # colours: followed by things that have a colour
        f"She wore a {col} {c(COLOUR_NOUNS)} to work.",
        f"The {col} {c(COLOUR_NOUNS)} belongs to {who}.",
        f"I would like a {col} {c(COLOUR_NOUNS)} or a {c(COLOURS)} {c(COLOUR_NOUNS)}.",
        # cities: followed by airport, station, museum, harbour
        f"We met at {city} {c(CITY_TAIL)} last year.",
        f"The train left {city} {c(CITY_TAIL)} late.",
        f"{who} works near {city} {c(CITY_TAIL)} and lives in {where}.",
        # family: followed by verbs of contact and of saying
        f"My {fam} {c(FAMILY_VERBS)} me from {where}.",
        f"Her {fam} {c(FAMILY_SAYS)} that {who} is right.",
        f"Our {fam} {c(FAMILY_VERBS)} {who} yesterday.",
        # activities: followed by how or when they are done
        f"I like to {act} {c(ACT_TAIL)} with {who}.",
        f"They want to {act} {c(ACT_TAIL)} this summer.",
        f"Let us {act} {c(ACT_TAIL)} before dinner.",
        # digits and punctuation, so that common text has no unknown characters
        f"Yes, {who} will bring {rng.randint(2, 99)} chairs to room {rng.randint(1, 999)}.",
        f"Is it true that {who} ran {rng.randint(2, 42)} kilometres in {rng.randint(1950, 2025)}?",
        f"What a well-known story: {who} won the prize in {rng.randint(1950, 2025)}!",
        f"\"Good evening,\" said {who}; \"the train leaves at {rng.randint(1, 12)}:"
        f"{rng.randint(10, 59)}.\"",
        f"The ({c(places)}) team scored {rng.randint(0, 9)}-{rng.randint(0, 9)} at home.",
        # invented people and places, for a wide vocabulary
        f"{who} and {c(people)} moved from {where} to {c(places)}.",
        f"{who} wrote a letter to {c(people)} about {where}.",
    ]
    return rng.choice(family_)


def bigram_cosines(text, pairs):
    """Cosine of the next-word count vectors of each pair of words (words split off '.')."""
    words = re.findall(r"[A-Za-z']+|[.,]", text)
    follow = collections.defaultdict(collections.Counter)
    for a, b in zip(words, words[1:]):
        follow[a][b] += 1

    def cos(u, v):
        dot = sum(u[k] * v.get(k, 0) for k in u)
        nu = math.sqrt(sum(x * x for x in u.values()))
        nv = math.sqrt(sum(x * x for x in v.values()))
        return dot / (nu * nv) if nu and nv else 0.0

    return [(a, b, cos(follow[a], follow[b])) for a, b in pairs]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--bytes", type=int, default=2_000_000, help="stop past this size")
    default_out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                               "corpus.txt")
    parser.add_argument("--out", default=os.path.normpath(default_out))
    parser.add_argument("--check", action="store_true", help="print bigram cosines")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    people = invented_names(rng, 3000, 3)
    places = [n + s for n, s in zip(invented_names(rng, 1500, 2),
                                    (rng.choice(["ton", "ford", "by", "wick", "ham", "mouth"])
                                     for _ in range(1500)))]
    lines, size = [], 0
    while size < args.bytes:
        # A line holds one to four sentences, as a paragraph of a simple story would.
        line = " ".join(make_sentence(rng, people, places) for _ in range(rng.randint(1, 4)))
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    text = "\n".join(lines) + "\n"
    with open(args.out, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)
    print(f"{args.out}: {len(text.encode('utf-8'))} bytes, {len(lines)} lines", file=sys.stderr)
    if args.check:
        pairs = [("cat", "dog"), ("cat", "kitten"), ("cat", "Tuesday"), ("Tuesday", "Friday"),
                 ("piano", "violin"), ("cat", "piano"), ("Tuesday", "piano"),
                 ("bread", "soup"), ("red", "blue"), ("London", "Paris"),
                 ("mother", "uncle"), ("cook", "swim"), ("cat", "bread"), ("red", "London")]
        for a, b, value in bigram_cosines(text, pairs):
            print(f"cos({a}, {b}) = {value:.3f}")


if __name__ == "__main__":
    main()
