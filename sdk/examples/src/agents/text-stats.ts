// "text-stats": counts, reading time and readability of an English text, computed locally and
// deterministically (same text, same figures, on every machine).
import type { AgentContext, ListingDocument } from "@agent-market/creator";

import { startAgent, type RunningAgent, type StartOptions } from "../start.js";
import { ENGLISH_STOPWORDS } from "./stopwords.js";

export interface TextStatsParameters {
  text: string;
  top_n: number;
  stopwords: boolean;
}

export interface TextStats {
  characters: {
    /** Unicode code points. */
    total: number;
    without_whitespace: number;
    letters: number;
    digits: number;
    whitespace: number;
    punctuation: number;
  };
  words: number;
  unique_words: number;
  sentences: number;
  paragraphs: number;
  syllables: number;
  /** Letters and digits per word. */
  average_word_length: number;
  /** Words per sentence. */
  average_sentence_length: number;
  reading_time_secs: number;
  /** Null for a text without words. */
  flesch_reading_ease: number | null;
  top_words: { word: string; count: number }[];
}

export const MAX_TEXT_CHARS = 100_000;
/** Average silent reading speed of English non-fiction (Brysbaert, 2019). */
export const READING_WORDS_PER_MINUTE = 238;

export const textStatsInputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Text statistics parameters",
  type: "object",
  properties: {
    text: { type: "string", maxLength: MAX_TEXT_CHARS, description: "The text to measure." },
    top_n: {
      type: "integer",
      minimum: 1,
      maximum: 50,
      default: 10,
      description: "How many of the most frequent words to list.",
    },
    stopwords: {
      type: "boolean",
      default: true,
      description: "Leave common English function words (the, and, of…) out of top_words.",
    },
  },
  required: ["text"],
  additionalProperties: false,
} as const;

const count = { type: "integer", minimum: 0 } as const;
const figure = { type: "number", minimum: 0 } as const;

export const textStatsOutputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Text statistics",
  type: "object",
  properties: {
    characters: {
      type: "object",
      description: "Counts of Unicode code points.",
      properties: {
        total: count,
        without_whitespace: count,
        letters: count,
        digits: count,
        whitespace: count,
        punctuation: count,
      },
      required: ["total", "without_whitespace", "letters", "digits", "whitespace", "punctuation"],
      additionalProperties: false,
    },
    words: {
      ...count,
      description: "Runs of letters and digits, joined by inner apostrophes or hyphens, with at least one letter.",
    },
    unique_words: { ...count, description: "Distinct words, ignoring case." },
    sentences: {
      ...count,
      description: "Stretches ending in . ! ? or … (or the end of the text) that contain a word.",
    },
    paragraphs: { ...count, description: "Blocks separated by blank lines." },
    syllables: { ...count, description: "English syllables, by a vowel-group heuristic." },
    average_word_length: { ...figure, description: "Letters and digits per word, to 2 decimals." },
    average_sentence_length: { ...figure, description: "Words per sentence, to 2 decimals." },
    reading_time_secs: { ...count, description: `At ${READING_WORDS_PER_MINUTE} words a minute, rounded.` },
    flesch_reading_ease: {
      type: ["number", "null"],
      description: "206.835 − 1.015 × words/sentences − 84.6 × syllables/words, to 2 decimals; null without words.",
    },
    top_words: {
      type: "array",
      maxItems: 50,
      description: "The most frequent words, lowercase, by count then alphabetically.",
      items: {
        type: "object",
        properties: { word: { type: "string", minLength: 1 }, count: { type: "integer", minimum: 1 } },
        required: ["word", "count"],
        additionalProperties: false,
      },
    },
  },
  required: [
    "characters",
    "words",
    "unique_words",
    "sentences",
    "paragraphs",
    "syllables",
    "average_word_length",
    "average_sentence_length",
    "reading_time_secs",
    "flesch_reading_ease",
    "top_words",
  ],
  additionalProperties: false,
} as const;

export const textStatsListing: ListingDocument = {
  name: "Text statistics",
  description:
    "Word, sentence, paragraph and character counts, average word and sentence length, reading time, " +
    "Flesch reading ease and the most frequent words of an English text. Deterministic.",
  tags: ["text", "statistics", "readability", "nlp", "deterministic"],
  input_schema: textStatsInputSchema,
  output_schema: textStatsOutputSchema,
};

const WORD = /[\p{L}\p{M}\p{Nd}]+(?:['’-][\p{L}\p{M}\p{Nd}]+)*/gu;
// A closing quote or bracket after the terminator still belongs to the sentence it ends.
const SENTENCE_END = /[.!?…]+["'”’)\]]*(?=\s|$)/u;

const round2 = (value: number) => Math.round(value * 100) / 100;

/** English syllables by the usual vowel-group heuristic: silent final -e, -es, -ed dropped. */
export function syllableCount(word: string): number {
  const latin = word
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z]/g, "");
  if (latin.length <= 3) return 1;
  const groups = latin
    .replace(/(?:[^laeiouy]es|[^td]ed|[^laeiouy]e)$/, "")
    .replace(/^y/, "")
    .match(/[aeiouy]{1,2}/g);
  return Math.max(1, groups?.length ?? 0);
}

function wordsOf(text: string): string[] {
  return (text.match(WORD) ?? []).filter((token) => /\p{L}/u.test(token));
}

/** The text's `words` figure alone, cheaper than all of `textStats`. */
export function wordCount(text: string): number {
  return wordsOf(text).length;
}

export function textStats(text: string, options: { top_n?: number; stopwords?: boolean } = {}): TextStats {
  const topN = options.top_n ?? 10;
  const skipStopwords = options.stopwords ?? true;

  const codePoints = [...text];
  const countOf = (pattern: RegExp) => codePoints.filter((c) => pattern.test(c)).length;
  const whitespace = countOf(/\s/u);

  const words = wordsOf(text);
  const normalized = words.map((w) => w.toLowerCase().replace(/’/g, "'"));
  const counts = new Map<string, number>();
  for (const word of normalized) counts.set(word, (counts.get(word) ?? 0) + 1);

  const sentences = text.split(SENTENCE_END).filter((s) => wordsOf(s).length > 0).length;
  const paragraphs = text.split(/\n\s*\n/).filter((p) => p.trim() !== "").length;
  const syllables = words.reduce((n, w) => n + syllableCount(w), 0);
  const wordChars = words.reduce((n, w) => n + [...w].filter((c) => /[\p{L}\p{Nd}]/u.test(c)).length, 0);

  const topWords = [...counts]
    .filter(([word]) => !(skipStopwords && ENGLISH_STOPWORDS.has(word)))
    .sort(([a, countA], [b, countB]) => countB - countA || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, topN)
    .map(([word, n]) => ({ word, count: n }));

  return {
    characters: {
      total: codePoints.length,
      without_whitespace: codePoints.length - whitespace,
      letters: countOf(/\p{L}/u),
      digits: countOf(/\p{Nd}/u),
      whitespace,
      punctuation: countOf(/\p{P}/u),
    },
    words: words.length,
    unique_words: counts.size,
    sentences,
    paragraphs,
    syllables,
    average_word_length: words.length ? round2(wordChars / words.length) : 0,
    average_sentence_length: sentences ? round2(words.length / sentences) : 0,
    reading_time_secs: Math.round((words.length / READING_WORDS_PER_MINUTE) * 60),
    flesch_reading_ease: words.length
      ? round2(206.835 - 1.015 * (words.length / sentences) - 84.6 * (syllables / words.length))
      : null,
    top_words: topWords,
  };
}

export function textStatsHandler({ parameters }: Pick<AgentContext<TextStatsParameters>, "parameters">): TextStats {
  return textStats(parameters.text, parameters);
}

export function startTextStats(options: StartOptions): Promise<RunningAgent> {
  return startAgent(
    { inputSchema: textStatsInputSchema, outputSchema: textStatsOutputSchema, handler: textStatsHandler },
    options,
  );
}
