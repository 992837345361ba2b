"""The worked examples of the rules (docs/rules.md): sheets as `render` prints them,
checked by the rules tests and by the `dicehall score` command's tests."""

QWINTO_28 = """\
Player name: Jane Doe             Points: 28
             -------------------------------
Red          | 2% 3% 6|XX| 9%11%12|13|15|16|
          ----------------------------------
Yellow    | 1| 3| 4| 5|  |XX|12%13%  |  |
       ----------------------------------
Blue   | 1| 3%  % 6|XX| 7|  |  |10%  %
       -------------------------------
Failed throws: 1 2 3"""

QWIXX_26 = """\
Player name: Jane Doe       Points: 26
            ------------------------------------
        Red | 2| 3| 4| 5| 6| 7| 8|XX|XX|11|XX| U
            ------------------------------------
     Yellow | 2|XX| 4| 5|XX|XX| 8| 9|10|11|12| U
            ------------------------------------
      Green |12|11|10|XX| 8|XX| 6|XX|XX| 3|XX| L
            ------------------------------------
       Blue |12|XX|10| 9| 8| 7| 6|XX| 4| 3| 2| U
            ------------------------------------
       Failed throws: 1 2"""
