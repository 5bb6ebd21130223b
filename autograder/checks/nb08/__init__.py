"""08's own checks (causal): the causal switch handed on from piece to piece (:mod:`.causal`;
causality itself is the shared :mod:`autograder.checks.causality`), and WriteLeftToRight read with
pretend networks (:mod:`.writing`)."""
