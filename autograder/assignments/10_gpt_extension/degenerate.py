# Degenerate answers to 10_gpt_extension and the most points each may keep (see autograder/degenerate.py).
#
# Question 2 is the only one checked automatically (the others are read by the instructor). Each of its
# tests copies weights the check set and compares the copy's logits with the chapter's GPT computed from
# those weights, and makes sure the copy is a page.MyTransformer whose own weights do the work: an answer
# that returns the GPT, copies nothing or hides a GPT inside keeps nothing.
QUESTIONS = {
    "q2": Question(
        replaces="CopyToMyTransformer",
        cap=0,
        keeps="nothing: every test compares the copy's logits with the chapter's GPT on weights the check set",
        variants={
            "returns_the_gpt": '''
                def CopyToMyTransformer(gpt):
                    return gpt
            ''',
            "no_copy": '''
                def CopyToMyTransformer(gpt):
                    cfg = gpt.cfg
                    return page.MyTransformer(cfg.vocab_size, cfg.dim, cfg.heads, cfg.layers,
                                              max_length=cfg.context, causal=True)
            ''',
            # the student's own GPT, loaded with the weights, in a class whose name ends in
            # MyTransformer (a name alone is not enough for the checks)
            "own_gpt_named_like_mytransformer": '''
                class NotReallyMyTransformer(nn.Module):
                    def __init__(self, gpt):
                        super().__init__()
                        self.gpt = GPT(gpt.cfg).eval()
                        self.gpt.load_state_dict(gpt.state_dict())

                    def forward(self, ids):
                        return self.gpt(ids)


                def CopyToMyTransformer(gpt):
                    return NotReallyMyTransformer(gpt)
            ''',
            # the page's network, but its forward keeps to the GPT it was given
            "page_layout_gpt_forward": '''
                def CopyToMyTransformer(gpt):
                    cfg = gpt.cfg
                    net = page.MyTransformer(cfg.vocab_size, cfg.dim, cfg.heads, cfg.layers,
                                             max_length=cfg.context, causal=True)
                    mine = GPT(cfg).eval()
                    mine.load_state_dict(gpt.state_dict())
                    kept = [mine]
                    net.forward = lambda ids: kept[0](ids)
                    return net
            ''',
        },
    ),
}
