#include "prompt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

/* How the words were chosen: every lowercase a-z word of Debian's wamerican list that encodes to a
 * single token when preceded by a space in both the Llama-3 and the Qwen2/Qwen3 tokenizers
 * (tokenizer.json of each, through transformers.js), ordered by Llama-3 token id (BPE merge order,
 * so most frequent first), minus two-letter fragments that are not words ("ex", "ch"),
 * abbreviations and code fragments ("int", "con", "etc"), and vulgar words; the first 1,200 kept.
 * Checked on random 2,000-word texts: exactly 2,000 tokens with either tokenizer, first word
 * included. */
static const char *const prompt_words[] = {
    "a",          "the",        "in",         "to",         "of",         "and",
    "for",        "is",         "be",         "on",         "this",       "if",
    "that",       "it",         "as",         "with",       "an",         "return",
    "or",         "you",        "new",        "from",       "at",         "are",
    "class",      "not",        "by",         "he",         "was",        "we",
    "public",     "us",         "have",       "get",        "can",        "do",
    "self",       "all",        "will",       "your",       "out",        "has",
    "up",         "but",        "go",         "function",   "void",       "set",
    "me",         "else",       "so",         "more",       "his",        "they",
    "per",        "data",       "one",        "name",       "true",       "end",
    "my",         "their",      "private",    "who",        "time",       "man",
    "which",      "any",        "false",      "value",      "no",         "about",
    "add",        "string",     "over",       "type",       "inter",      "part",
    "work",       "when",       "use",        "off",        "other",      "been",
    "had",        "were",       "file",       "would",      "our",        "year",
    "some",       "there",      "said",       "her",        "like",       "let",
    "also",       "than",       "static",     "just",       "result",     "them",
    "into",       "what",       "list",       "case",       "first",      "import",
    "act",        "only",       "print",      "its",        "back",       "need",
    "sub",        "start",      "user",       "under",      "then",       "may",
    "how",        "people",     "should",     "test",       "make",       "after",
    "right",      "long",       "min",        "array",      "she",        "read",
    "form",       "want",       "number",     "require",    "key",        "two",
    "size",       "where",      "while",      "look",       "could",      "know",
    "hand",       "most",       "try",        "now",        "him",        "break",
    "every",      "point",      "error",      "text",       "show",       "find",
    "current",    "used",       "play",       "log",        "see",        "help",
    "these",      "pass",       "down",       "even",       "item",       "don",
    "did",        "through",    "last",       "event",      "again",      "high",
    "line",       "does",       "before",     "because",    "state",      "here",
    "final",      "run",        "very",       "model",      "way",        "call",
    "well",       "object",     "years",      "default",    "view",       "many",
    "being",      "good",       "using",      "request",    "child",      "echo",
    "person",     "style",      "method",     "expect",     "found",      "post",
    "such",       "think",      "differ",     "much",       "count",      "check",
    "open",       "next",       "follow",     "car",        "game",       "path",
    "each",       "support",    "own",        "sign",       "those",      "system",
    "best",       "same",       "create",     "made",       "mark",       "group",
    "world",      "process",    "main",       "color",      "report",     "take",
    "day",        "top",        "free",       "action",     "index",      "real",
    "max",        "build",      "message",    "input",      "art",        "between",
    "table",      "head",       "must",       "order",      "say",        "product",
    "double",     "place",      "week",       "program",    "response",   "code",
    "without",    "still",      "assert",     "field",      "team",       "second",
    "going",      "range",      "fact",       "android",    "home",       "left",
    "direct",     "allow",      "page",       "different",  "around",     "really",
    "image",      "target",     "both",       "put",        "level",      "document",
    "local",      "content",    "float",      "develop",    "too",        "extends",
    "great",      "month",      "super",      "title",      "context",    "met",
    "life",       "catch",      "pay",        "change",     "position",   "old",
    "book",       "version",    "three",      "law",        "base",       "during",
    "console",    "against",    "power",      "width",      "label",      "project",
    "element",    "success",    "date",       "big",        "map",        "pop",
    "few",        "ear",        "match",      "node",       "another",    "sit",
    "care",       "effect",     "fun",        "leg",        "service",    "since",
    "full",       "turn",       "body",       "something",  "stand",      "available",
    "block",      "keep",       "throw",      "things",     "red",        "control",
    "come",       "custom",     "source",     "await",      "mill",       "ask",
    "output",     "email",      "disc",       "business",   "required",   "govern",
    "might",      "never",      "hard",       "intern",     "called",     "options",
    "height",     "small",      "access",     "protected",  "job",        "address",
    "sum",        "little",     "port",       "status",     "update",     "link",
    "given",      "better",     "feel",       "already",    "including",  "always",
    "parent",     "got",        "less",       "account",    "lot",        "valid",
    "bit",        "following",  "sure",       "search",     "invest",     "says",
    "rest",       "interest",   "perform",    "die",        "site",       "values",
    "won",        "video",      "cell",       "player",     "cost",       "total",
    "load",       "clear",      "row",        "seem",       "short",      "override",
    "company",    "done",       "health",     "children",   "days",       "initial",
    "online",     "instance",   "organ",      "reason",     "within",     "design",
    "cent",       "school",     "consider",   "include",    "stop",       "later",
    "client",     "love",       "able",       "men",        "give",       "condition",
    "copy",       "either",     "important",  "lead",       "family",     "option",
    "exist",      "offer",      "water",      "step",       "government", "display",
    "times",      "four",       "far",        "present",    "room",       "once",
    "results",    "continue",   "talk",       "grow",       "mass",       "mean",
    "until",      "market",     "area",       "length",     "kind",       "light",
    "side",       "example",    "camp",       "miss",       "based",      "plan",
    "away",       "button",     "experience", "render",     "near",       "country",
    "author",     "specific",   "along",      "express",    "begin",      "software",
    "win",        "thing",      "why",        "single",     "rights",     "ant",
    "women",      "season",     "possible",   "sent",       "command",    "recent",
    "money",      "told",       "working",    "query",      "window",     "least",
    "column",     "record",     "making",     "close",      "percent",    "past",
    "write",      "move",       "pat",        "special",    "city",       "tell",
    "select",     "font",       "course",     "late",       "amount",     "enough",
    "looking",    "hold",       "pot",        "property",   "low",        "price",
    "today",      "attack",     "means",      "story",      "meet",       "mom",
    "den",        "sort",       "thought",    "task",       "review",     "switch",
    "above",      "question",   "word",       "provide",    "research",   "publish",
    "cover",      "whether",    "having",     "employ",     "large",      "created",
    "host",       "role",       "web",        "deal",       "problem",    "press",
    "though",     "points",     "ever",       "services",   "actually",   "million",
    "understand", "happen",     "server",     "files",      "often",      "space",
    "password",   "store",      "format",     "details",    "face",       "save",
    "items",      "social",     "major",      "expected",   "yet",        "food",
    "members",    "comb",       "bar",        "send",       "connection", "become",
    "makes",      "global",     "contact",    "except",     "certain",    "character",
    "news",       "device",     "previous",   "material",   "below",      "media",
    "fail",       "black",      "component",  "added",      "buy",        "came",
    "delete",     "card",       "root",       "handle",     "getting",    "claim",
    "air",        "enter",      "location",   "night",      "doing",      "pick",
    "watch",      "human",      "tax",        "girl",       "box",        "strong",
    "interface",  "house",      "track",      "pack",       "section",    "wait",
    "together",   "throws",     "terms",      "apply",      "session",    "others",
    "fund",       "several",    "template",   "subject",    "history",    "individual",
    "users",      "future",     "started",    "mode",       "took",       "games",
    "products",   "bad",        "needs",      "known",      "seen",       "border",
    "live",       "variable",   "provided",   "hope",       "young",      "website",
    "study",      "network",    "limit",      "cut",        "went",       "fire",
    "across",     "community",  "official",   "visit",      "received",   "token",
    "months",     "particular", "learn",      "mind",       "quick",      "comment",
    "background", "represent",  "series",     "hot",        "original",   "bill",
    "frame",      "draw",       "comes",      "elect",      "filter",     "remove",
    "front",      "dig",        "selected",   "according",  "virtual",    "anything",
    "hours",      "war",        "models",     "early",      "center",     "language",
    "ago",        "easy",       "download",   "students",   "buffer",     "due",
    "cannot",     "white",      "register",   "period",     "screen",     "net",
    "common",     "suggest",    "accept",     "random",     "hit",        "click",
    "implement",  "players",    "among",      "answer",     "walk",       "treat",
    "age",        "five",       "friend",     "clean",      "words",      "header",
    "discuss",    "issue",      "land",       "stream",     "quality",    "works",
    "half",       "police",     "simple",     "empty",      "cook",       "everything",
    "relations",  "nothing",    "running",    "someone",    "share",      "entry",
    "changes",    "personal",   "offset",     "pie",        "events",     "whole",
    "needed",     "likely",     "fight",      "writing",    "rate",       "correct",
    "fall",       "believe",    "features",   "minutes",    "collection", "similar",
    "taken",      "son",        "moment",     "bring",      "entire",     "trying",
    "member",     "foot",       "board",      "push",       "please",     "types",
    "edit",       "cult",       "defined",    "thread",     "instead",    "idea",
    "film",       "teach",      "phone",      "active",     "death",      "article",
    "almost",     "sell",       "connect",    "feature",    "via",        "install",
    "complete",   "general",    "asked",      "reserved",   "icon",       "party",
    "vector",     "normal",     "further",    "database",   "music",      "speed",
    "taking",     "forward",    "failed",     "concern",    "sender",     "term",
    "potential",  "published",  "probably",   "enjoy",      "returns",    "weight",
    "conditions", "exception",  "module",     "favor",      "loss",       "engine",
    "issues",     "parse",      "stay",       "lower",      "perfect",    "exact",
    "former",     "six",        "margin",     "heart",      "rather",     "building",
    "questions",  "security",   "however",    "inside",     "president",  "graph",
    "tag",        "attempt",    "round",      "friends",    "campaign",   "energy",
    "profession", "behind",     "raise",      "wanted",     "policy",     "third",
    "bed",        "training",   "prior",      "exit",       "release",    "shall",
    "outside",    "ground",     "unique",     "pour",       "tree",       "byte",
    "dating",     "matter",     "shows",      "ball",       "simply",     "fast",
    "memory",     "fit",        "political",  "industry",   "extra",      "reported",
    "resources",  "wrong",      "seems",      "unit",       "takes",      "appear",
    "difficult",  "coming",     "settings",   "quite",      "blog",       "everyone",
    "pretty",     "longer",     "menu",       "currently",  "parameters", "crush",
    "names",      "effort",     "actual",     "fields",     "fix",        "cases",
    "higher",     "itself",     "respect",    "progress",   "mid",        "resource",
    "dim",        "direction",  "additional", "numbers",    "companies",  "sound",
    "statement",  "alert",      "contract",   "lines",      "soon",       "join",
    "fill",       "choose",     "office",     "transform",  "implements", "hash",
    "flag",       "note",       "specified",  "upon",       "groups",     "risk",
    "woman",      "gets",       "included",   "cause",      "van",        "focus",
    "multiple",   "regard",     "addition",   "various",    "receive",    "increase",
    "commit",     "leave",      "align",      "reading",    "notice",     "lock",
    "standard",   "padding",    "states",     "internal",   "especially", "cross",
    "national",   "script",     "problems",   "arch",       "written",    "images",
    "platform",   "force",      "prevent",    "living",     "pattern",    "entity",
    "useful",     "tool",       "feed",       "popular",    "methods",    "allowed",
    "impact",     "elements",   "train",      "related",    "technology", "scale",
    "score",      "student",    "average",    "court",      "container",  "parts",
    "decision",   "saw",        "approach",   "saying",     "anyone",     "song",
    "channel",    "changed",    "finally",    "kill",       "drug",       "convert",
    "ways",       "mat",        "plus",       "profile",    "ready",      "sense",
    "latest",     "region",     "deep",       "reach",      "counter",    "weeks",
    "damage",     "lost",       "himself",    "dog",        "paper",      "staff",
    "themselves", "driver",     "category",   "oil",        "stock",      "dead",
    "rules",      "modify",     "contains",   "stack",      "undefined",  "playing",
    "bottom",     "couple",     "road",       "held",       "includes",   "avoid",
    "tab",        "insert",     "machine",    "operation",  "production", "areas",
    "operator",   "candid",     "argument",   "establish",  "movie",      "activity",
    "provides",   "uses",       "license",    "ability",    "parameter",  "functions",
    "rot",        "pen",        "choice",     "flex",       "characters", "wonder",
    "legal",      "ten",        "goes",       "reference",  "regular",    "goal",
    "touch",      "built",      "worth",      "natural",    "associated", "storage",
    "bytes",      "travel",     "passed",     "grid",       "bus",        "countries",
    "login",      "ill",        "levels",     "looks",      "necessary",  "released",
    "properties", "respond",    "financial",  "threat",     "evidence",   "rule",
    "starting",   "logger",     "recently",   "returned",   "seek",       "username",
    "otherwise",  "systems",    "drop",       "structure",  "directly",   "errors",
    "arguments",  "ensure",     "grad",       "usually",    "serious",    "customer",
    "door",       "plant",      "began",      "distance",   "chance",     "protect",
    "route",      "primary",    "leaders",    "gun",        "comments",   "updated",
    "inform",     "led",        "bank",       "sample",     "hands",      "offers",
    "shape",      "sleep",      "sold",       "safe",       "shared",     "remember",
    "shoot",      "scene",      "became",     "park",       "implied",    "yourself",
    "wrote",      "equal",      "serial",     "allows",     "middle",     "quickly",
    "cop",        "actions",    "proper",     "inn",        "objects",    "matrix",
    "ones",       "green",      "paint",      "designed",   "layer",      "views",
    "core",       "expert",     "directory",  "election",   "beautiful",  "secret",
    "chat",       "origin",     "effects",    "management", "setting",    "happy",
    "finish",     "camera",     "stuff",      "military",   "sale",       "mention",
    "town",       "solution",   "slow",       "blue",       "lives",      "customers",
    "cast",       "dark",       "package",    "nor",        "club",       "loop",
    "played",     "existing",   "complex",    "analysis",   "deliver",    "computer",
    "mobile",     "owner",      "treatment",  "leading",    "flow",       "involved",
    "shift",      "eyes",       "nice",       "floor",      "redirect",   "wish",
};

#define PROMPT_VOCABULARY_SIZE (sizeof prompt_words / sizeof prompt_words[0])
/* The longest word above, kept as a constant for buffer sizing (test_prompt checks it). */
#define PROMPT_MAX_WORD_LENGTH 10

uint32_t prompt_vocabulary_size(void) {
    return (uint32_t)PROMPT_VOCABULARY_SIZE;
}

const char *prompt_word(uint32_t i) {
    return i < PROMPT_VOCABULARY_SIZE ? prompt_words[i] : NULL;
}

size_t prompt_max_word_length(void) {
    return PROMPT_MAX_WORD_LENGTH;
}

size_t prompt_count_words(const char *text, size_t len) {
    size_t words = 0;
    bool in_word = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

size_t prompt_max_bytes(uint32_t n_words) {
    return (size_t)n_words * (prompt_max_word_length() + 1) + 1;
}

struct prompt_words {
    uint32_t *index; /* into prompt_words[], in vocabulary order */
    uint32_t n;
};

/* Thread-local: each worker thread runs its own run's sessions (and its own tokenizer). */
static _Thread_local const prompt_words_t *prompt_active_words;

void prompt_use_words(const prompt_words_t *words) {
    prompt_active_words = words;
}

prompt_words_t *prompt_words_new(const tokenizer_t *tokenizer, tokenizer_scratch_t *scratch,
                                 char *err, size_t err_len) {
    prompt_words_t *self = calloc(1, sizeof *self);
    if (self)
        self->index = malloc(PROMPT_VOCABULARY_SIZE * sizeof *self->index);
    if (!self || !self->index) {
        snprintf(err, err_len, "out of memory");
        prompt_words_destroy(&self);
        return NULL;
    }
    for (uint32_t i = 0; i < PROMPT_VOCABULARY_SIZE; i++) {
        char spaced[PROMPT_MAX_WORD_LENGTH + 2] = " ";
        size_t len = strlen(prompt_words[i]);
        memcpy(spaced + 1, prompt_words[i], len);
        if (tokenizer_encode(tokenizer, scratch, spaced + 1, len, NULL, 0) == 1 &&
            tokenizer_encode(tokenizer, scratch, spaced, len + 1, NULL, 0) == 1)
            self->index[self->n++] = i;
    }
    if (self->n < 100) {
        snprintf(err, err_len,
                 "only %u of the %u prompt words are one token each in this tokenizer (100 "
                 "needed)",
                 self->n, (unsigned)PROMPT_VOCABULARY_SIZE);
        prompt_words_destroy(&self);
    }
    return self;
}

void prompt_words_destroy(prompt_words_t **self_p) {
    if (!*self_p)
        return;
    free((*self_p)->index);
    free(*self_p);
    *self_p = NULL;
}

long prompt_append_words(rng_t *rng, uint32_t n_words, char *buf, size_t cap) {
    if (cap == 0)
        return -1;
    const prompt_words_t *words = prompt_active_words;
    size_t used = 0;
    for (uint32_t i = 0; i < n_words; i++) {
        const char *word = words ? prompt_words[words->index[rng_next_below(rng, words->n)]]
                                 : prompt_words[rng_next_below(rng, PROMPT_VOCABULARY_SIZE)];
        size_t len = strlen(word);
        size_t need = len + (i > 0) + 1; /* separator, word, room for the NUL */
        if (used + need > cap) {
            buf[0] = '\0';
            return -1;
        }
        if (i > 0)
            buf[used++] = ' ';
        memcpy(buf + used, word, len);
        used += len;
    }
    buf[used] = '\0';
    return (long)used;
}
