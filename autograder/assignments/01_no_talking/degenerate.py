# Degenerate answers to 01_no_talking and the most points each may keep (see autograder/degenerate.py).
QUESTIONS = {
    "q1": "values worked out by hand (the shape (5, 8) and the row numbers [0, 3]): the right values "
          "are the answer",
    "q3": Question(
        replaces="embed",
        cap=0,
        keeps="nothing: the one check asks for an nn.Embedding(len(vocab), 8) that looks up the table "
              "the check sets",
        variants={
            # an nn.Embedding whose lookup gives zeros, its table zeroed so that weight[x] agrees
            "zero_lookup": '''
                class ZeroEmbedding(nn.Embedding):
                    def forward(self, x):
                        return torch.zeros(*x.shape, self.embedding_dim)

                embed = ZeroEmbedding(len(vocab), 8)
                with torch.no_grad():
                    embed.weight.zero_()
                embed_matches = True
            ''',
            # looks rows up in a frozen copy of the first table: the trainable weight is never used
            "unused_weight": '''
                class FrozenEmbedding(nn.Embedding):
                    def __init__(self, *args):
                        super().__init__(*args)
                        self.register_buffer("frozen", self.weight.detach().clone())

                    def forward(self, x):
                        return F.embedding(x, self.frozen)

                embed = FrozenEmbedding(len(vocab), 8)
                embed_matches = True
            ''',
            # an nn.Embedding without numbers
            "meta": '''
                embed = nn.Embedding(len(vocab), 8, device="meta")
                embed_matches = True
            ''',
        },
    ),
    "q4": "a shape worked out by hand ((64, 4, 8)): the right shape is the answer",
    "q5": Question(
        replaces="TrainTwoSentences",
        cap=1,
        keeps="test_returns_list (a list of `steps` plain numbers), kept only by an answer whose numbers "
              "are the network's own losses (measured by the check): one that measures them honestly "
              "but trains nothing keeps it, made-up losses get 0; test_trains and test_zero_grad need "
              "a network that was trained",
        variants={
            # losses made up, the network untouched
            "made_up_losses": '''
                def TrainTwoSentences(net, steps=1500):
                    return [7.0 - 0.01 * step for step in range(steps)]
            ''',
            "random_losses": '''
                def TrainTwoSentences(net, steps=1500):
                    return [float(6 + torch.rand(())) for step in range(steps)]
            ''',
            "zero_losses": '''
                def TrainTwoSentences(net, steps=1500):
                    return [0.0] * steps
            ''',
            # the real losses, measured, but nothing trained
            "measures_only": '''
                def TrainTwoSentences(net, steps=1500):
                    losses = []
                    for step in range(steps):
                        x_0 = torch.stack([SamplePInit() for b in range(64)])
                        with torch.no_grad():
                            losses.append(DiffusionLoss(net, x_0, MASK).item())
                    return losses
            ''',
            # the whole loop, with a learning rate of zero: trains nothing
            "learning_rate_zero": '''
                def TrainTwoSentences(net, steps=1500):
                    opt = torch.optim.Adam(net.parameters(), lr=0.0)
                    losses = []
                    for step in range(steps):
                        opt.zero_grad()
                        x_0 = torch.stack([SamplePInit() for b in range(64)])
                        loss = DiffusionLoss(net, x_0, MASK)
                        loss.backward()
                        opt.step()
                        losses.append(loss.item())
                    return losses
            ''',
            # moves the parameters at random (no gradients), made-up losses
            "jiggles_parameters": '''
                def TrainTwoSentences(net, steps=1500):
                    with torch.no_grad():
                        for step in range(steps):
                            for p in net.parameters():
                                p.add_(1e-3 * torch.randn_like(p))
                    return [7.0 - 0.01 * step for step in range(steps)]
            ''',
        },
    ),
    # q9: numbers worked out by hand (the frequencies, their entropy, four times it): the right values
    # are the answer. The entropy and the loss also earn when computed from the student's own
    # dictionary (follow-through), but only for a real attempt: its words exactly the words of the
    # sentences, frequencies above zero adding up to one (not all on one word).
    "q9": Question(
        replaces="word_frequencies",
        cap=0,
        keeps="nothing: follow-through credit needs a dictionary over the words of the sentences",
        variants={
            # wrong constants: one word with frequency 1, entropy 0, loss 0
            "one_word_zeros": '''
                word_frequencies = {"the": 1.0}
                frequency_entropy = 0.0
                no_talking_loss = 0.0
            ''',
            # the right words with frequency 1 for one of them: entropy 0, loss 0
            "all_on_one_word": '''
                word_frequencies = {"the": 1.0, "is": 0.0, "cat": 0.0, "alive": 0.0, "box": 0.0, "empty": 0.0}
                frequency_entropy = 0.0
                no_talking_loss = 0.0
            ''',
        },
    ),
}
