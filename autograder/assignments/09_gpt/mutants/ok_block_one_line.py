# question: q4
# expect: pass
# replaces: Block
# why: the two residual steps written with other names
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(cfg.dim), SelfAttention(cfg)
        self.norm2, self.mlp = nn.LayerNorm(cfg.dim), MLP(cfg)

    def forward(self, x):
        heard = x + self.attn(self.norm1(x))
        thought = self.mlp(self.norm2(heard))
        return heard + thought
