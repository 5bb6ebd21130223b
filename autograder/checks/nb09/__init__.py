"""09's own checks (the chapter's GPT): its pieces written out and their gates (:mod:`.chapter`;
causality itself is the shared :mod:`autograder.checks.causality`), and the networks the student's
own checks are tried on (:mod:`.suspects`)."""
