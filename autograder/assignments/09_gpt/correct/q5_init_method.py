# question: q5
# replaces: GPT
# why: blocks appended in a loop, init_weights an ordinary method, positions with a batch index of 1
class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tokens = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.positions = nn.Embedding(cfg.context, cfg.dim)
        self.blocks = nn.ModuleList()
        for _ in range(cfg.layers):
            self.blocks.append(Block(cfg))
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.head.weight = self.tokens.weight
        self.apply(self.init_weights)

    def init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, ids):
        T = ids.size(1)
        pos = torch.arange(0, T, dtype=torch.long, device=ids.device).unsqueeze(0)
        x = self.tokens(ids) + self.positions(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
