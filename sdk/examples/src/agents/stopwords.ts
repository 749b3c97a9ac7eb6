// Common English function words, which would otherwise fill every top-words list.
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below " +
    "between both but by can could did do does doing down during each few for from further had has have " +
    "having he her here hers herself him himself his how i if in into is it its itself just me more most " +
    "my myself no nor not now of off on once only or other our ours ourselves out over own same she " +
    "should so some such than that the their theirs them themselves then there these they this those " +
    "through to too under until up very was we were what when where which while who whom why will with " +
    "would you your yours yourself yourselves i'm you're he's she's it's we're they're i've you've we've " +
    "they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't " +
    "weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't cannot couldn't shouldn't " +
    "let's that's there's what's who's"
  ).split(" "),
);
