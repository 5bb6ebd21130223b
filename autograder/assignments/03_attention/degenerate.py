# Degenerate answers to 03_attention and the most points each may keep (see autograder/degenerate.py).
ATTENTION = '''
    def Attention(q, k, v):
        weights = FAKE_WEIGHTS(q, (*q.shape[:-1], k.shape[-2]))
        return FAKE(v, (*q.shape[:-1], v.shape[-1])), weights
'''

WEIGHTS_THAT_DO_NO_WORK = {
    # every site listens to every site equally, whatever q and k (rows add up to one, gradients
    # reach q and k as zeros); not a mutant: a permutation check that needs a real answer makes it
    # lose q5's point too, so it lives here, under both caps
    "uniform_weights": '''
        def Attention(q, k, v):
            L = k.shape[-2]
            weights = torch.ones(*q.shape[:-1], L) / L + 0 * (q @ k.transpose(-2, -1))
            return weights @ v, weights
    ''',
    # every site listens to itself only: rows are probabilities, shuffling shuffles them
    "identity_weights": '''
        def Attention(q, k, v):
            L = q.shape[-2]
            weights = torch.eye(L, dtype=q.dtype).expand(*q.shape[:-1], L)
            return weights @ v, weights
    ''',
    # no mixing between sites: site i's output is its own value scaled by q_i . k_i,
    # the weights a softmax over a diagonal energy; rows of probabilities that change with q and k,
    # equivariant under permutation, differentiable, but no site ever listens to another
    "no_mixing": '''
        def Attention(q, k, v):
            s = (q * k).sum(-1)
            weights = torch.softmax(torch.diag_embed(s), dim=-1)
            out = v * torch.sigmoid(s)[..., None]
            return out, weights
    ''',
    # one fixed random matrix of weights, whatever q and k
    "constant_weights": '''
        def Attention(q, k, v):
            L = q.shape[-2]
            g = torch.Generator().manual_seed(0)
            weights = torch.softmax(torch.randn(L, L, generator=g, dtype=q.dtype), dim=-1)
            weights = weights.expand(*q.shape[:-1], L)
            return weights @ v, weights
    ''',
}

QUESTIONS = {
    "q1": Question(
        replaces="Attention",
        cap=1,
        keeps="test_one_sentence (the shapes of out and weights for one sentence, and rows adding "
              "up to one, which uniform weights do)",
        template=ATTENTION,
        variants={
            **WEIGHTS_THAT_DO_NO_WORK,
            # the queries' attention to themselves: the keys are never used
            "ignores_keys": '''
                def Attention(q, k, v):
                    weights = torch.softmax(q @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return weights @ v, weights
            ''',
            # the right weights, an output that ignores the values
            "ignores_values": '''
                def Attention(q, k, v):
                    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
                    return torch.zeros(*q.shape[:-1], v.shape[-1], dtype=v.dtype), weights
            ''',
        },
    ),
    "q2": Question(
        replaces="rows_add_to_one",
        cap=0,
        keeps="nothing: both checks are recomputed with the student's own Attention on the student's "
              "own q, k, v, so a hard-coded True is right only where that Attention passes the check "
              "(for a correct Attention True and True are the answer)",
        variants={
            "hard_coded_false": '''
                torch.manual_seed(0)
                q, k, v = torch.randn(3, 5, 8)
                out, weights = Attention(q, k, v)
                rows_add_to_one = False
                agrees_with_pytorch = False
            ''',
            # no Attention, a table of PyTorch's answers for the notebook's own q, k, v
            # filled where they are made (zeros for any other); True reported of it
            "remembers_own_inputs": '''
                known = []


                def Attention(q, k, v):
                    for kq, kk, kv, answer in known:
                        if q.shape == kq.shape and torch.equal(q, kq) and torch.equal(k, kk) and torch.equal(v, kv):
                            return answer
                    return torch.zeros_like(v), torch.zeros(*q.shape[:-1], k.shape[-2])


                torch.manual_seed(0)
                q, k, v = torch.randn(3, 5, 8)
                known.append((q, k, v, (F.scaled_dot_product_attention(q, k, v), torch.full((5, 5), 0.2))))
                out, weights = Attention(q, k, v)
                rows_add_to_one = True
                agrees_with_pytorch = True
            ''',
            # True and True said of an Attention that gives zeros
            "true_of_zeros": '''
                def Attention(q, k, v):
                    return torch.zeros_like(v), torch.zeros(*q.shape[:-1], k.shape[-2])

                torch.manual_seed(0)
                q, k, v = torch.randn(3, 5, 8)
                out, weights = Attention(q, k, v)
                rows_add_to_one = True
                agrees_with_pytorch = True
            ''',
        },
    ),
    "q4": "numbers read off the three plots (0.1 hot, 10 cold): the right pair is the answer",
    "q5": Question(
        replaces="Attention",
        cap=1,
        keeps="test_shuffle_agrees (the student's own torch.allclose on their own Attention, which the "
              "notebook still computes truthfully for an Attention that does no work)",
        template=ATTENTION,
        kinds=("zeros", "uniform", "echo", "random"),
        variants=dict(WEIGHTS_THAT_DO_NO_WORK),
    ),
    "q6": "numbers worked out from the formula (the average of the values and a copy of site 1's): "
          "the right pair of lists is the answer",
    "q7": Question(
        replaces="unscaled_512",
        cap=0,
        keeps="nothing: the two numbers are recomputed with the student's own Attention on the table's own "
              "random numbers, so only what the table prints for that Attention is right",
        variants={
            # the numbers a student might guess without running the table: frozen and uniform
            "guessed_frozen_and_uniform": '''
                unscaled_512, scaled_512 = 1.0, 1 / 16
            ''',
            # the d = 8 row instead of the d = 512 row
            "wrong_row": '''
                unscaled_512, scaled_512 = largest[8]
            ''',
        },
    ),
}
