// Tests run the production server build; NODE_ENV=test selects it and keeps Vite out.
process.env.NODE_ENV = "test";
