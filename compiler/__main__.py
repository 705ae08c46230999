from compiler.launch import run

run()
