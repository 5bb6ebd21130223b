"""01's own checks (no talking): the word frequencies of the two sentences, and training measured
by the check (:mod:`.training`)."""
