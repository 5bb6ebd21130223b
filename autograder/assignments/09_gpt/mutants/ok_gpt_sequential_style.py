# question: q5
# expect: pass
# replaces: GPT
# why: ties the other way round (the table is the head's), position ids broadcast from a (1, T) row
class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.tokens = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.tokens.weight = self.head.weight
        self.positions = nn.Embedding(cfg.context, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.dim)
        self.apply(GPT.init_weights)

    @staticmethod
    def init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, ids):
        where = torch.arange(ids.shape[1], device=ids.device)[None]
        x = self.tokens(ids) + self.positions(where)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
