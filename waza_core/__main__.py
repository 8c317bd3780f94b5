from waza_core.cli import main

main()
