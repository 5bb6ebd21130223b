# Degenerate answers to NN_name and the most points each may keep (see autograder/degenerate.py).
#
# q1's tests: test_one_matrix (1, public) and test_random_shapes (2) both compare the values with the
# row sums, so an answer that makes its numbers up keeps nothing.
QUESTIONS = {
    "q1": Question(
        replaces="RowSums",
        cap=0,
        keeps="nothing: both tests compare the values with the sums of the rows",
        template='''
            def RowSums(x):
                return FAKE(x, x.shape[:-1])
        ''',
    ),
}
