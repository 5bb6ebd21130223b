# question: q9
# replaces: word_frequencies, frequency_entropy, no_talking_loss
# why: counts out of 20 words (five sentences of four, four of them about the cat), numpy for the sum
counts = {"the": 5, "is": 5, "cat": 4, "alive": 4, "box": 1, "empty": 1}
total = sum(counts.values())
word_frequencies = {word: n / total for word, n in counts.items()}
p = np.array(list(word_frequencies.values()))
frequency_entropy = float(-(p * np.log(p)).sum())
no_talking_loss = 4 * frequency_entropy
