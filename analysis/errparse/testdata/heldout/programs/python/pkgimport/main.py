from app.service import register

print(register("ana").name)
