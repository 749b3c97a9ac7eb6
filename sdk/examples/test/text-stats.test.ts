// textStats on texts whose figures are worked out by hand.
import assert from "node:assert/strict";

import { syllableCount, textStats } from "../src/index.js";

describe("textStats", () => {
  it("an empty text has no words, no sentences and no readability", () => {
    assert.deepEqual(textStats(""), {
      characters: { total: 0, without_whitespace: 0, letters: 0, digits: 0, whitespace: 0, punctuation: 0 },
      words: 0,
      unique_words: 0,
      sentences: 0,
      paragraphs: 0,
      syllables: 0,
      average_word_length: 0,
      average_sentence_length: 0,
      reading_time_secs: 0,
      flesch_reading_ease: null,
      top_words: [],
    });
  });

  it("counts characters as code points, by Unicode class", () => {
    const stats = textStats("Café 42, 😀!\n");
    assert.deepEqual(stats.characters, {
      total: 12,
      without_whitespace: 9,
      letters: 4,
      digits: 2,
      whitespace: 3,
      punctuation: 2,
    });
    // "42" has no letter, so it is not a word.
    assert.equal(stats.words, 1);
  });

  it("keeps contractions and hyphenated words whole, and folds case and curly apostrophes", () => {
    const stats = textStats("Don’t stop. don't STOP well-known rock-and-roll", { stopwords: false });
    assert.equal(stats.words, 6);
    assert.deepEqual(stats.top_words, [
      { word: "don't", count: 2 },
      { word: "stop", count: 2 },
      { word: "rock-and-roll", count: 1 },
      { word: "well-known", count: 1 },
    ]);
    assert.deepEqual(
      textStats("Don’t stop. don't STOP well-known rock-and-roll").top_words.map((w) => w.word),
      ["stop", "rock-and-roll", "well-known"],
    );
  });

  it("counts sentences and paragraphs", () => {
    const text = 'He said "Stop!" Then he left… Did she? Yes.\n\n  \n\nA new paragraph without an end';
    const stats = textStats(text);
    assert.equal(stats.sentences, 5);
    assert.equal(stats.paragraphs, 2);
  });

  it("reads at 238 words a minute", () => {
    assert.equal(textStats("word ".repeat(238)).reading_time_secs, 60);
    assert.equal(textStats("word ".repeat(119)).reading_time_secs, 30);
  });

  it("scores Flesch reading ease from words, sentences and syllables", () => {
    // Reading(2) is(1) fun(1). Cats(1) nap(1) daily(2): 206.835 - 1.015 * 6/2 - 84.6 * 8/6 = 90.99.
    const stats = textStats("Reading is fun. Cats nap daily.");
    assert.equal(stats.words, 6);
    assert.equal(stats.sentences, 2);
    assert.equal(stats.syllables, 8);
    assert.equal(stats.flesch_reading_ease, 90.99);
    assert.equal(stats.average_word_length, 4);
    assert.equal(stats.average_sentence_length, 3);
  });

  it("counts English syllables by vowel groups", () => {
    const cases: [string, number][] = [
      ["the", 1],
      ["cat", 1],
      ["make", 1],
      ["table", 2],
      ["simple", 2],
      ["barked", 1],
      ["played", 1],
      ["wanted", 2],
      ["needed", 2],
      ["reading", 2],
      ["yellow", 2],
      ["daily", 2],
      ["computer", 3],
      ["yesterday", 3],
      ["education", 4],
      // No Latin vowels to count: one syllable.
      ["字", 1],
    ];
    for (const [word, expected] of cases) assert.equal(syllableCount(word), expected, word);
  });

  it("limits top_words to top_n, by count then alphabetically", () => {
    const stats = textStats("b a c b a b d", { top_n: 3 });
    assert.deepEqual(stats.top_words, [
      { word: "b", count: 3 },
      { word: "c", count: 1 },
      { word: "d", count: 1 },
    ]);
  });

  it("is deterministic", () => {
    const text = "Reproducible figures: the same text gives the same statistics, every time. Twice? Yes!";
    assert.deepEqual(textStats(text, { top_n: 5 }), textStats(text, { top_n: 5 }));
    assert.equal(JSON.stringify(textStats(text)), JSON.stringify(textStats(text)));
  });
});
