"""The hands of the seed examples of RULES.md, shared by the rule tests and the game tests.

Where a seed gives only a fragment of a hand, the rest is filled with other suits so that each
example's four hands form one consistent deal.
"""

from __future__ import annotations

# Seed 001, first trick: Bimal leads 7H; Ashma, Tulsi and "you" follow. One consistent deal.
BIMAL_1 = "TS 6S 4S 2S AH KH JH 9H 8H 7H 6H 5H 3H"
ASHMA_1 = "AS 9S 5S TH 4H KD QD 8D 3D AC JC 7C 2C"
TULSI_1 = "KS 8S QH 2H AD JD 9D 6D 5D KC QC 9C 3C"
YOU_1 = "QS JS 7S 3S TD 7D 4D 2D TC 8C 6C 5C 4C"

# Seed 001, second trick: you lead AH; Ashma, Tulsi and Bimal are all void in hearts, so you hold all
# thirteen; Bimal holds no spades and Tulsi only 5S and JS, so Ashma holds the other eleven.
YOU_2 = "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H"
ASHMA_2 = "AS KS QS TS 9S 8S 7S 6S 4S 3S 2S AD AC"
TULSI_2 = "JS 5S KD QD JD TD 9D KC QC JC TC 9C 8C"
BIMAL_2 = "8D 7D 6D 5D 4D 3D 2D 7C 6C 5C 4C 3C 2C"

# Seed 003: AH led, 6H follows, the third (void) trumps 4S, the fourth is void in hearts and holds
# 2S as its only spade, and KD: "debe 2S aunque no gane" (strict). One consistent deal.
FIRST_3 = "8S 7S AH KH QH JH TH 9H 5D 4D 5C 4C 3C"
SECOND_3 = "6S 5S 3S 8H 7H 6H 5H 4H 3H 2H 3D 2D 2C"
THIRD_3 = "AS KS QS JS TS 9S 4S AD 7D 6D AC 7C 6C"
FOURTH_3 = "2S KD QD JD TD 9D 8D KC QC JC TC 9C 8C"
# Seed 003: "sobre 7H con AH y 3H, juega AH".
ACE_THREE_HEARTS = "KS 6S AH 3H QD 9D 5D 2D JC 8C 7C 4C 2C"

ALL_SPADES = "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"
MIXED_LEAD = "AS KS 7S 9H 4H AD QD 6D 3D KC TC 5C 2C"
