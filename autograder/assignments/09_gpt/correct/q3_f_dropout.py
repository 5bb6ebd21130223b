# question: q3
# replaces: MLP
# why: a GELU module, F.dropout(x, p, self.training) instead of nn.Dropout
class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.up = nn.Linear(cfg.dim, 4 * cfg.dim)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * cfg.dim, cfg.dim)
        self.p = cfg.dropout

    def forward(self, x):
        h = self.act(self.up(x))
        return F.dropout(self.down(h), p=self.p, training=self.training)
