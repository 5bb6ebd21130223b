# question: q3
# replaces: multi_params
# why: the count as a formula with named sizes
dim, heads = 32, 4
head_dim = dim // heads
per_head = 3 * dim * head_dim            # Q, K and V without biases
mix = dim * dim + dim                    # weight and bias
multi_params = heads * per_head + mix
print("by hand:", multi_params)
