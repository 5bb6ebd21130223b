# question: q3
# expect: pass
# replaces: MLP
# why: the GELU as a module and the dropout kept as a module attribute with another name
class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.up = nn.Linear(cfg.dim, 4 * cfg.dim)
        self.kink = nn.GELU()
        self.down = nn.Linear(4 * cfg.dim, cfg.dim)
        self.dropout = nn.Dropout(p=cfg.dropout)

    def forward(self, x):
        h = self.kink(self.up(x))
        return self.dropout(self.down(h))
