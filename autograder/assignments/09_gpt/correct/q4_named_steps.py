# question: q4
# replaces: Block
# why: the two residual steps written out with names
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.dim)
        self.attn = SelfAttention(cfg)
        self.norm2 = nn.LayerNorm(cfg.dim)
        self.mlp = MLP(cfg)

    def forward(self, x):
        heard = self.attn(self.norm1(x))
        x = x + heard
        thought = self.mlp(self.norm2(x))
        x = x + thought
        return x
