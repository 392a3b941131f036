from lintaid.cli import main

main()
