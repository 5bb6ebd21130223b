# question: q3
# expect: fail
# replaces: MLP
# why: gives down the wrong tensor, so forward raises (the blocks and GPT are checked with the chapter's MLP)
# hint: raised RuntimeError at `return self.drop(self.down(x))`
class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.up = nn.Linear(cfg.dim, 4 * cfg.dim)
        self.down = nn.Linear(4 * cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        h = F.gelu(self.up(x))
        return self.drop(self.down(x))
